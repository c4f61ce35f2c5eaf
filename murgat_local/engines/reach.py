"""What reached the model: prompt tokens per media modality, counted from the engine's own ids.

A verdict is only as good as the evidence the model received, and a path that loses a clip
(a chat template without its placeholder, a server that drops audio, a processor that makes
zero frames) still yields a fluent YES or NO. Every engine therefore counts, in the prompt
token ids its runtime actually built (placeholders already expanded by the processor), the
tokens of each modality, using one map from token id to modality per model
(`placeholder_tokens`). A cited modality of which zero tokens arrived is an error
(`unreached`), never a verdict; where the ids are not available the count is unknown (None,
with a reason), never an invented zero.

More than zero is not what was cited: two audio citations with one lost still hold audio tokens.
So each cited part also has its expected count (what the model's own processor places for it,
`engines.expect`), and the ids are split into the parts' stretches in prompt order
(`arrivals`): a part that arrived short names its citation in the call's error. A modality whose
total arrived whole is never an error, however its stretches divide.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..media.parts import AudioPart, ImagePart, VideoPart
from ..text.citations import format_time

MODALITIES = ("image", "video", "audio")

# Config keys that name a modality's placeholder token (Qwen: *_token_id / *_token_index;
# LLaVA-style: image_token_index; Gemma 3: image_token_index; Gemma 4: *_token_id).
_CONFIG_KEYS = {f"{m}_{suffix}": m for m in MODALITIES for suffix in ("token_id", "token_index")}
# Sub-configs of parts that never read the prompt (an omni model's speech decoder has its own ids).
_SKIP = ("talker", "code2wav", "token2wav")
# Placeholder strings by family, for a config that names none.
_TOKEN_NAMES = {
    "<|IMAGE|>": "image",
    "<|image_pad|>": "image",
    "<image_soft_token>": "image",
    "<image>": "image",
    "<|VIDEO|>": "video",
    "<|video_pad|>": "video",
    "<video>": "video",
    "<video_soft_token>": "video",
    "<|AUDIO|>": "audio",
    "<|audio_pad|>": "audio",
    "<audio_soft_token>": "audio",
    "<audio>": "audio",
}
# How an error names the engine a call ran on.
ENGINE_LABELS = {
    "vllm": "in-process vLLM",
    "openai": "server",
    "replicas": "replicas",
    "ray": "Ray",
    "transformers": "transformers",
}


def _from_config(config: Mapping, found: dict[int, str]) -> None:
    for key, value in config.items():
        if isinstance(value, Mapping):
            if not key.startswith(_SKIP):
                _from_config(value, found)
        elif key in _CONFIG_KEYS and isinstance(value, int) and not isinstance(value, bool):
            found.setdefault(value, _CONFIG_KEYS[key])


def placeholder_tokens(folder: pathlib.Path | str, tokenizer=None) -> dict[int, str]:
    """token id -> modality for the model in `folder`: its config's placeholder ids, else
    (a config naming none) the tokenizer's placeholder tokens by their family names."""
    found: dict[int, str] = {}
    config = pathlib.Path(folder) / "config.json"
    if config.is_file():
        _from_config(json.loads(config.read_text(encoding="utf-8")), found)
    if found or tokenizer is None:
        return found
    vocab = tokenizer.get_vocab()
    return {vocab[name]: modality for name, modality in _TOKEN_NAMES.items() if name in vocab}


def count(ids: Iterable[int], placeholders: Mapping[int, str]) -> dict[str, int]:
    """Prompt tokens per modality among `ids`: every modality the model has a placeholder for,
    zeros included (a modality without one is not counted, so it is never a false zero)."""
    known = set(placeholders.values())
    out = {m: 0 for m in MODALITIES if m in known}
    for t in ids:
        m = placeholders.get(int(t))
        if m is not None:
            out[m] += 1
    return out


def unreached(
    request,
    reached: Mapping[str, int] | None,
    model: str,
    engine: str,
    *,
    video_as_images: bool = False,
    cited: Sequence[CitedTokens] | None = None,
) -> str | None:
    """The error of a call whose cited media did not arrive whole (None when it did, or when
    the count is unknown). With the per-citation counts (`cited`), a part that arrived short
    names its citation; without them, a cited modality of zero tokens is the error. A clip sent
    as separate frames (`video_as_images`) arrives as image tokens. A video part carrying its
    audio (Qwen-Omni's audio in video) would count its audio as audio; the protocol cites sound
    as audio parts, so none is sent that way."""
    if reached is None:
        return None
    where = ENGINE_LABELS.get(engine, engine)
    if cited:
        why = short(cited, reached)
        return None if why is None else f"{why} ({model}, {where} engine)"
    for modality in dict.fromkeys(m.modality for m in request.media):
        arrives_as = ("video", "image") if modality == "video" and video_as_images else (modality,)
        if not any(m in reached for m in arrives_as):
            continue  # the model has no placeholder known for it: not counted, not zero
        if sum(reached.get(m, 0) for m in arrives_as) == 0:
            return f"{modality} cited, 0 {modality} tokens reached {model} on the {where} engine"
    return None


# ---------------------------------------------------------------- per citation


@dataclass(frozen=True)
class CitedTokens:
    """One cited part's placeholder tokens: `expected` (what the model's processor places for
    it), `arrived` (what the prompt ids hold for it) and, where the ids fit another reading
    equally well (two parts of one length, one lost), `alt`: what arrived for it in that one."""

    citation: str
    modality: str  # the modality its tokens arrive as (a clip sent as frames: image)
    expected: int
    arrived: int
    alt: int | None = None

    def as_list(self) -> list:
        return [self.citation, self.modality, self.expected, self.arrived, self.alt]

    @classmethod
    def from_list(cls, row: Sequence) -> CitedTokens:
        return cls(str(row[0]), str(row[1]), int(row[2]), int(row[3]), _int_or_none(row[4]))


def _int_or_none(value) -> int | None:
    return None if value is None else int(value)


def _span(word: str, start: float, end: float) -> str:
    if abs(end - start) < 5e-4:
        return f"{word} {format_time(start)}"
    return f"{word} {format_time(start)}-{format_time(end)}"


def part_label(part, index: int) -> str:
    """How an error names a cited part: as its citation reads ("audio 0:02-0:04", "visual
    0:12"), from the times it was cut at; by its place ("audio part 2") where it has none."""
    citation = getattr(part, "citation", None)  # a segment reference, cut where the file is
    if citation is not None:
        start, end = citation.times
        return _span("audio" if part.modality == "audio" else "visual", start, end)
    if isinstance(part, ImagePart) and part.t is not None:
        return _span("visual", part.t, part.t)
    if isinstance(part, VideoPart) and (part.times or len(part.frames)):
        times = part.times or tuple(
            part.start + k / part.fps for k in range(len(part.frames)) if part.fps
        )
        if times:
            return _span("visual", min(times), max(times))
    if isinstance(part, AudioPart) and part.start is not None:
        return _span("audio", part.start, part.start + len(part.waveform) / part.sample_rate)
    return f"{part.modality} part {index + 1}"


def runs(ids: Iterable[int], placeholders: Mapping[int, str]) -> list[tuple[str, int]]:
    """The ids' unbroken stretches of one modality's placeholders, in order: (modality, length)."""
    out: list[tuple[str, int]] = []
    prev = None
    for t in ids:
        m = placeholders.get(int(t))
        if m is not None and m == prev:
            out[-1] = (m, out[-1][1] + 1)
        elif m is not None:
            out.append((m, 1))
        prev = m
    return out


def _align(parts: Sequence[tuple[str, int]], stretches: Sequence[tuple[str, int]]) -> list[int]:
    """Tokens given to each part when the stretches are handed out in order, each part taking
    consecutive stretches of its own modality (possibly none, a stretch no part takes being
    left over): as many parts as possible get exactly their expected count, then as few tokens
    as possible are left over; of equal readings, earlier parts take first."""
    k, n = len(parts), len(stretches)
    before = [0]
    for _, length in stretches:
        before.append(before[-1] + length)
    # best[i][j]: (parts matched, -tokens left over) for parts i.. over stretches j..; how[i][j]
    # the stretches part i takes there (None: stretch j is left over).
    best = [[(0, 0)] * (n + 1) for _ in range(k + 1)]
    how: list[list[int | None]] = [[None] * (n + 1) for _ in range(k + 1)]
    for j in range(n - 1, -1, -1):
        best[k][j] = (0, best[k][j + 1][1] - stretches[j][1])
    for i in range(k - 1, -1, -1):
        modality, expected = parts[i]
        for j in range(n, -1, -1):
            end = j
            while end < n and stretches[end][0] == modality:
                end += 1
            choice: tuple[tuple[int, int], int | None] | None = None
            for stop in range(end, j - 1, -1):  # the most stretches first: earlier parts take
                got = before[stop] - before[j]
                rest = best[i + 1][stop]
                score = (rest[0] + (got == expected), rest[1])
                if choice is None or score > choice[0]:
                    choice = (score, stop - j)
            if j < n:
                rest = best[i][j + 1]
                score = (rest[0], rest[1] - stretches[j][1])
                if choice is None or score > choice[0]:
                    choice = (score, None)
            assert choice is not None
            best[i][j], how[i][j] = choice
    got_by_part, i, j = [], 0, 0
    while i < k:
        taken = how[i][j]
        if taken is None:
            j += 1
            continue
        got_by_part.append(before[j + taken] - before[j])
        i, j = i + 1, j + taken
    return got_by_part


def arrivals(
    expected: Sequence[tuple[str, int]], ids: Iterable[int], placeholders: Mapping[int, str]
) -> list[tuple[int, int]]:
    """Per part (modality, expected tokens, in prompt order): the tokens that arrived for it,
    read with earlier parts taking first, and read with later parts taking first. The two
    differ only where the ids cannot tell which of two parts is short."""
    stretches = runs(ids, placeholders)
    first = _align(expected, stretches)
    last = _align(expected[::-1], stretches[::-1])[::-1]
    return list(zip(first, last))


def labelled(
    request, expected: Sequence[tuple[str, int]], arrived: Sequence[Sequence[int]]
) -> tuple[CitedTokens, ...]:
    """The per-part counts, each named by the request's part it is for."""
    return tuple(
        CitedTokens(part_label(part, i), m, n, got, None if alt == got else alt)
        for i, (part, (m, n), (got, alt)) in enumerate(zip(request.media, expected, arrived))
    )


def cited_fields(
    request,
    expected: Sequence[tuple[str, int]] | str | None,
    ids: Iterable[int] | None,
    placeholders: Mapping[int, str] | None,
) -> dict:
    """The `Result` fields of per-citation reach: `cited` (each part of `request`, its
    expected and arrived tokens), or `cited_unknown` saying why they were not counted
    (`expected` is that reason where it is a string). Nothing for a request without media."""
    if not request.media:
        return {}
    if isinstance(expected, str):
        return {"cited_unknown": expected}
    if expected is None or ids is None or placeholders is None:
        return {"cited_unknown": "the prompt token ids or the placeholder tokens are not known"}
    ids = list(ids)
    return {"cited": labelled(request, expected, arrivals(expected, ids, placeholders))}


def short(cited: Sequence[CitedTokens], reached: Mapping[str, int] | None) -> str | None:
    """What arrived short, citation by citation (None: nothing did). Only a modality whose
    total fell short of what its parts expect can have a short part; an ambiguous reading
    names the other parts it could be as well."""
    totals: dict[str, int] = {}
    for c in cited:
        totals[c.modality] = totals.get(c.modality, 0) + c.expected
    lacking = {
        m
        for m, n in totals.items()
        if (reached or {}).get(m, sum(c.arrived for c in cited if c.modality == m)) < n
    }
    named = [c for c in cited if c.modality in lacking and c.arrived < c.expected]
    if not named:
        return None
    either = [
        c
        for c in cited
        if c.modality in lacking
        and c.arrived >= c.expected
        and c.alt is not None
        and c.alt < c.expected
    ]
    text = "; ".join(
        f"{c.citation}: expected {c.expected} {c.modality} tokens, {c.arrived} arrived"
        for c in named
    )
    if either:
        text += (
            f" (or {' or '.join(c.citation for c in either)} instead: the prompt ids cannot "
            "tell which)"
        )
    return text


def prompt_print(ids: Iterable[int] | None, bos_id: int | None) -> dict:
    """`Result` fields that say which prompt ran: `prompt_digest`, the sha256 of the prompt
    token ids as the runtime built them (placeholders expanded), comparable across routes; and
    `bos_count`, how many of them are the tokenizer's BOS (None where it has none). Empty where
    the ids are unknown."""
    if ids is None:
        return {}
    ids = [int(t) for t in ids]
    blob = ",".join(map(str, ids)).encode()
    return {
        "prompt_digest": hashlib.sha256(blob).hexdigest(),
        "bos_count": None if bos_id is None else ids.count(int(bos_id)),
    }
