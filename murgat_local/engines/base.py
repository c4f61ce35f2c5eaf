"""The engine interface: a batch of requests in, results out, in order.

One interface serves judges and responders alike: a request may be constrained to a typed
verdict (a pydantic model compiled to a grammar), to one of a few choices, or left as free
text, with or without media. Every engine (vLLM in-process, transformers, and later an
OpenAI-compatible server or a replay of recorded answers) implements `Engine.judge`; the
pipelines never know which one they drive. Engines know nothing of MURGAT.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..media.parts import MediaPart
from ..text.clean import remove_thinking
from .constraints import ParseFailure, Verdict, choice_regex, parse_verdict

if TYPE_CHECKING:
    from .presets import Quirks
    from .reach import CitedTokens


@dataclass(frozen=True)
class Sampling:
    """Per-request decoding settings (free-text generation); judges use the engine's defaults."""

    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0  # 0: no top-k cut
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def decoding(request: Request, quirks: Quirks) -> Sampling | None:
    """A request's decoding settings: its own (free text), else the preset's judge sampling
    (`Quirks.sampling`, from the model card), else None: the engine's greedy default."""
    if request.sampling is not None:
        return request.sampling
    preset = quirks.sampling
    if preset is None:
        return None
    return Sampling(
        temperature=preset.temperature, top_p=preset.top_p, top_k=preset.top_k, seed=preset.seed
    )


@dataclass(frozen=True)
class Request:
    """One call. `prompt` is the user text; `media` goes before or after it per the preset,
    each part preceded by its `captions` entry when there is one (a frame's timestamp).

    At most one output contract: `verdict` (a typed verdict), `choices` (one of these strings),
    `pattern` (free text that must match this regular expression whole, e.g. a plan's shape);
    none of them is free text. Free text is bounded by `sampling.max_tokens`.

    `item` names the input item the request is for (a response id), and `stage` the step of
    the caller's that sends it (a MURGAT judge's stage, e.g. "entail"), for the engines that
    answer per item (`per_item = True`, e.g. human labels); other engines ignore both. Engines
    know nothing of MURGAT: a stage is a name they pass through, never part of a prompt."""

    prompt: str
    verdict: type[Verdict] | None = None
    system: str | None = None
    media: tuple[MediaPart, ...] = ()
    choices: tuple[str, ...] | None = None
    sampling: Sampling | None = None
    captions: tuple[str | None, ...] = ()
    pattern: str | None = None
    item: str | None = None
    stage: str | None = None

    def __post_init__(self):
        if sum(x is not None for x in (self.verdict, self.choices, self.pattern)) > 1:
            raise ValueError(
                "a request takes one output contract: a verdict type, choices or a pattern"
            )
        if self.captions and len(self.captions) != len(self.media):
            raise ValueError("captions, when given, must match the media parts one to one")

    @property
    def modalities(self) -> frozenset[str]:
        return frozenset({"text"} | {m.modality for m in self.media})

    def constraint(self) -> str | None:
        """The regular expression the output must match, or None for free text."""
        if self.verdict is not None:
            return self.verdict.regex()
        if self.choices is not None:
            return choice_regex(self.choices)
        return self.pattern

    def max_tokens(self) -> int:
        if self.sampling is not None:
            return self.sampling.max_tokens
        if self.verdict is not None:
            return self.verdict.max_tokens
        return 16 if self.choices is not None else 1024


@dataclass(frozen=True)
class Result:
    """The outcome of one request: a verdict, a choice or free text; or a parse failure; or a
    refusal or failure (`error`). `raw` is exactly what the model wrote."""

    verdict: Verdict | None = None
    failure: ParseFailure | None = None
    error: str | None = None
    raw: str = ""
    prompt_tokens: int = 0
    output_tokens: int = 0
    note: str | None = None  # what the engine changed to make the request fit (frames reduced)
    # Prompt tokens per media modality the engine actually placed in the prompt (`reach.count`),
    # or None where they cannot be counted, with the reason in `reached_unknown`.
    reached: dict[str, int] | None = None
    reached_unknown: str | None = None
    # Per cited part, in the request's order: the placeholder tokens the model's processor
    # places for it and those that arrived for it (`reach.cited_fields`); or why not counted.
    cited: tuple[CitedTokens, ...] | None = None
    cited_unknown: str | None = None
    # The prompt token ids the runtime ran (`reach.prompt_print`): their sha256, and how many
    # of them are the tokenizer's BOS (None where it has none); None where the ids are unknown.
    prompt_digest: str | None = None
    bos_count: int | None = None

    # A yes/no verdict's confidence (`engines.confidence`): the probability of YES at the
    # deciding token, renormalised over YES and NO; None with `p_yes_unknown` saying why.
    p_yes: float | None = None
    p_yes_unknown: str | None = None
    # A thinking model's thought reached its budget and was closed before the verdict.
    thought_cut: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.failure is None

    @property
    def text(self) -> str:
        """The answer after any reasoning block (a choice, or free text without thinking)."""
        return remove_thinking(self.raw)


# The judges' names for the same types.
JudgeRequest = Request
JudgeResult = Result


@dataclass
class EngineStats:
    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    wall_s: float = 0.0
    parse_failures: int = 0
    refused: int = 0
    batches: int = 0
    batch_splits: int = 0  # batches the engine rejected and that were split to isolate a request

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["calls_per_s"] = round(self.calls / self.wall_s, 3) if self.wall_s else None
        return d


class EngineUnavailable(RuntimeError):
    """The engine as a whole cannot answer (a server that stays unreachable past its retry
    budget): the run stops with this message; every verdict computed before stays cached."""


# The error contract, one for every engine (tests/e2e/test_engine_contract.py checks each):
#   `judge(requests)` returns exactly one Result per request, in order, and never raises for
#   one request's problem.
#   - refused: the request cannot be sent to this model at all (a modality it does not take,
#     more media than its limits, a prompt longer than its context). `error` starts with
#     "refused"; nothing is generated; the engine stays usable.
#   - failed: the engine tried and the request broke (bad media, the engine rejected it, the
#     server answered 4xx). `error` names the cause; the other requests are judged.
#   - timed out: no answer within the engine's per-request timeout, after its retries.
#     `error` says "timed out".
#   - unparsed: the model answered but not in the contract's shape: `failure` set, `raw` kept.
#   Only an engine that cannot answer anything (gone for good) raises, `EngineUnavailable`.
# Errors are never cached; a later run asks again.
REFUSED = "refused"
TIMED_OUT = "timed out"


@runtime_checkable
class Engine(Protocol):
    name: str
    modalities: frozenset[str]
    stats: EngineStats

    @property
    def identity(self) -> str:
        """What makes two engines give the same verdicts (model, weights, decoding)."""

    def judge(self, requests: Sequence[Request]) -> list[Result]: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- shared by the engines


def refusal(request: Request, model_name: str, modalities: frozenset[str]) -> str | None:
    """The reason a model cannot take this request, checked before it reaches the engine."""
    missing = request.modalities - modalities
    if missing:
        return (
            f"refused: model {model_name!r} does not accept {', '.join(sorted(missing))} input "
            f"(it accepts {', '.join(sorted(modalities))})"
        )
    return None


_GENERIC_SPECIAL = re.compile(
    r"<\|[^<>|\n]{1,48}\|>"  # ChatML / Qwen / Llama-3 style: <|im_start|>, <|vision_pad|>
    r"|</?(?:start_of_turn|end_of_turn|start_of_image|end_of_image|image_soft_token|"
    r"bos|eos|pad|unk|s|think|audio_soft_token|start_of_audio|end_of_audio)>"
    r"|\[/?INST\]"
)
_BREAK = "\u2060"  # WORD JOINER: invisible, and no tokenizer's special token contains it


def _break(token: str) -> str:
    return token[0] + _BREAK + token[1:]


def neutralize(text: str, special_tokens: Sequence[str] = ()) -> str:
    """Make untrusted text unable to forge a chat turn.

    Tokenizers turn special-token strings inside a message (`<|im_end|>`, `<start_of_turn>`) into
    real control tokens, so an evaluated model could close the judge's turn and write its own.
    Every occurrence of the model's special tokens, and of the shapes special tokens take in the
    supported families, gets an invisible joiner after its first character: the text reads the
    same to the judge, but no longer tokenizes into a control token.
    """
    if not text:
        return text
    for tok in sorted({t for t in special_tokens if len(t) > 1}, key=len, reverse=True):
        if tok in text:
            text = text.replace(tok, _break(tok))
    return _GENERIC_SPECIAL.sub(lambda m: _break(m.group(0)), text)


def build_messages(
    request: Request, quirks, *, text_only_strings: bool = True
) -> tuple[list[dict], list[MediaPart]]:
    """Chat messages with typed content parts, and the media in the order their parts appear.

    Text-only requests use plain string content, which every chat template accepts.
    """
    messages: list[dict] = []
    user_prefix = ""
    if request.system:
        if quirks.system_role:
            messages.append({"role": "system", "content": request.system})
        else:
            user_prefix = request.system + "\n\n"
    text = user_prefix + request.prompt
    if not request.media and text_only_strings:
        messages.append({"role": "user", "content": text})
        return messages, []
    media_parts: list[dict] = []
    for i, m in enumerate(request.media):
        caption = request.captions[i] if request.captions else None
        if caption:
            media_parts.append({"type": "text", "text": caption})
        media_parts.append({"type": m.modality})
    text_part = {"type": "text", "text": text}
    content = media_parts + [text_part] if quirks.media_first else [text_part] + media_parts
    messages.append({"role": "user", "content": content})
    return messages, list(request.media)


def finish(request: Request, raw: str, prompt_tokens: int, output_tokens: int) -> Result:
    """The result of a finished generation, checked against the request's contract."""
    # A thinking model writes its reasoning first; the constraint applies after it.
    if request.verdict is not None:
        parsed = parse_verdict(request.verdict, remove_thinking(raw))
        if isinstance(parsed, ParseFailure):
            return Result(None, parsed, None, raw, prompt_tokens, output_tokens)
        return Result(parsed, None, None, raw, prompt_tokens, output_tokens)
    if request.choices is not None and remove_thinking(raw).strip() not in request.choices:
        failure = ParseFailure(raw, f"output is not one of {list(request.choices)} (truncated?)")
        return Result(None, failure, None, raw, prompt_tokens, output_tokens)
    if request.pattern is not None:
        try:
            shape = re.compile(request.pattern)
        except re.error as e:  # an engine that did not reject the constraint itself
            return Result(
                error=f"the output constraint is not a valid regular expression ({e})",
                raw=raw,
                prompt_tokens=prompt_tokens,
                output_tokens=output_tokens,
            )
    if request.pattern is not None and shape.fullmatch(remove_thinking(raw).strip()) is None:
        failure = ParseFailure(raw, "output does not have the required shape (truncated?)")
        return Result(None, failure, None, raw, prompt_tokens, output_tokens)
    return Result(None, None, None, raw, prompt_tokens, output_tokens)


def with_p_yes(request: Request, result: Result, steps: Sequence | None) -> Result:
    """The result with its yes/no confidence read from the generated tokens' alternatives
    (`confidence.Step`s; None where the engine returned none). Only a yes/no verdict has one."""
    from dataclasses import replace

    from .confidence import p_yes, wants_p_yes

    if not wants_p_yes(request.verdict) or result.verdict is None:
        return result
    if steps is None:
        return replace(result, p_yes_unknown="the engine returned no log-probabilities")
    value, why = p_yes(steps)
    return replace(result, p_yes=value, p_yes_unknown=why)


class Timer:
    def __init__(self, stats: EngineStats):
        self.stats = stats

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.stats.wall_s += time.perf_counter() - self.t0
        return False


def record(stats: EngineStats, results: Sequence[Result]) -> None:
    stats.batches += 1
    for r in results:
        if r.error:
            stats.refused += 1
            continue
        stats.calls += 1
        stats.prompt_tokens += r.prompt_tokens
        stats.output_tokens += r.output_tokens
        if r.failure:
            stats.parse_failures += 1
