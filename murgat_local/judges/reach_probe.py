"""Whether each modality reaches a model: the counterfactual probe of `murgat smoke --reach`.

Each modality a model takes is sent cut from the sample media, then neutralised (frames blanked,
audio muted, the same shapes, so the same prompt length), with YES or NO as the only output. The
first generated token is the decision; its log-probabilities (the top `TOP_K`, renormalised
over the tokens the choice constraint leaves legal: `decision_logprobs`) are compared. A modality whose blanking
moves none of them by more than `TOLERANCE` never reached the model. The cut request is sent a
second time as a control: what the same request moves by itself is the noise floor, and a
difference at or below it proves nothing. The control comes back identical on vLLM's CPU build
(noise 0), and the tiny test models' tone beside a 420-token clip moves Qwen3-Omni's decision by
about 5e-4, so the tolerance sits below that.

An omni model (video and audio) also gets the clip with its own soundtrack, only the soundtrack
muted (`AUDIO_IN_VIDEO`): audio travelling beside a video, as a citation of both sends it.

The probe drives an engine that is already running (`vllm.LLM` in process, or `vllm serve`
through the OpenAI engine), so a caller that holds one pays no new start.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engines import Request, Result
from ..engines.limits import prepare
from ..engines.reach import placeholder_tokens
from ..engines.wire import body
from ..media.parts import ImagePart, MediaPart, VideoPart
from ..media.segments import SegmentCutter
from ..text.citations import AUDIO, VISUAL, Citation

TOP_K = 20  # the most top log-probabilities `vllm serve` returns
TOLERANCE = 1e-4
CHOICES = ("YES", "NO")
AUDIO_IN_VIDEO = "audio in video"
SYSTEM = "You check claims against evidence. Answer with YES or NO."
CLAIMS = {
    "image": "Claim: the frame is green.",
    "video": "Claim: the screen turns green.",
    "audio": "Claim: someone speaks.",
    AUDIO_IN_VIDEO: "Claim: a tone plays while the screen turns green.",
}


@dataclass(frozen=True)
class Probe:
    """One modality's pair: the request as cut, and the same with that modality neutralised."""

    modality: str
    cut: Request
    blank: Request


@dataclass(frozen=True)
class Decision:
    """The first generated token of one request and the prompt it followed."""

    logprobs: dict[int, float] = dataclasses.field(default_factory=dict)
    token: str = ""
    prompt_ids: tuple[int, ...] = ()
    prompt_tokens: int = 0
    error: str | None = None


def decision_logprobs(values: dict[int, float]) -> dict[int, float]:
    """The decision token's top alternatives as log-probabilities over the legal ones: the
    masked (-inf, or a server's -9999) are dropped and the rest renormalised. An engine this
    run started returns masked logits (`confidence.LOGPROBS_MODE`), a server someone else
    started their log-softmax; with every legal token among the top `TOP_K` (YES or NO leaves
    a handful) both give the same numbers."""
    legal = {t: v for t, v in values.items() if math.isfinite(v) and v > -9999.0}
    if not legal:
        return {}
    top = max(legal.values())
    log_total = top + math.log(math.fsum(math.exp(v - top) for v in legal.values()))
    return {t: v - log_total for t, v in legal.items()}


def blanked(part: MediaPart) -> MediaPart:
    """The part with its content zeroed and its shape kept: black frames, a silent waveform."""
    if isinstance(part, ImagePart):
        return dataclasses.replace(part, pixels=np.zeros_like(part.pixels))
    if isinstance(part, VideoPart):
        return dataclasses.replace(part, frames=np.zeros_like(part.frames))
    return dataclasses.replace(part, waveform=np.zeros_like(part.waveform))


def _request(modality: str, media: tuple[MediaPart, ...]) -> Request:
    return Request(CLAIMS[modality], system=SYSTEM, media=media, choices=CHOICES)


def reach_probes(media_root: pathlib.Path, modalities: frozenset[str]) -> list[Probe]:
    """The probes for the media modalities among `modalities`, cut from the sample media in
    `media_root` (colors.mp4: a colour and a tone per second; speech.mp4: a spoken sentence,
    else colors.mp4's tones) with the project's cutter."""
    cutter = SegmentCutter(media_root)
    try:
        colors = cutter.source("colors.mp4")
        speech = (
            cutter.source("speech.mp4")
            if (pathlib.Path(media_root) / "speech.mp4").is_file()
            else colors
        )
        frame = cutter.cut(colors, Citation(VISUAL, 1.0, 1.0, "visual, 0:01"))
        clip = cutter.cut(colors, Citation(VISUAL, 0.0, 2.0, "visual, 0:00-0:02"))
        voice = cutter.cut(speech, Citation(AUDIO, 0.0, 3.0, "audio, 0:00-0:03"))
        track = cutter.cut(colors, Citation(AUDIO, 0.0, 2.0, "audio, 0:00-0:02"))
    finally:
        cutter.close()
    probes = []
    for modality, part in (("image", frame), ("video", clip), ("audio", voice)):
        if modality in modalities:
            probes.append(
                Probe(modality, _request(modality, (part,)), _request(modality, (blanked(part),)))
            )
    if {"video", "audio"} <= modalities:
        probes.append(
            Probe(
                AUDIO_IN_VIDEO,
                _request(AUDIO_IN_VIDEO, (clip, track)),
                _request(AUDIO_IN_VIDEO, (clip, blanked(track))),
            )
        )
    return probes


def difference(a: dict[int, float], b: dict[int, float]) -> float:
    """The largest absolute difference between two top-K log-probability vectors. A token in
    one and not the other is at most the other's lowest there, so the difference is at least
    the gap to that lowest: a lower bound, never an overstatement."""
    if not a or not b:
        return math.nan
    out = 0.0
    for x, y in ((a, b), (b, a)):
        floor = min(y.values())
        for token, lp in x.items():
            out = max(out, abs(lp - y[token]) if token in y else max(0.0, lp - floor))
    return out


def placeholder_ids(folder: pathlib.Path) -> dict[str, int]:
    """Each modality's placeholder token id in the model's config (the thinker's, for an omni
    model), for counting them in prompt ids; empty where the config names none. The same map the
    engines count `reached` with (`engines.reach.placeholder_tokens`), one id per modality."""
    found: dict[str, int] = {}
    try:
        tokens = placeholder_tokens(folder)
    except (OSError, ValueError):
        return found
    for token, modality in tokens.items():
        found.setdefault(modality, token)
    return found


def decide(engine, requests: Sequence[Request]) -> list[Decision]:
    """The decision token of each request, on a started engine: vLLM in process (`.llm`) or a
    server (`.base_url`, the OpenAI engine), each request prepared as that engine prepares it."""
    from ..engines.openai import OpenAIEngine
    from ..engines.vllm import VLLMEngine

    if isinstance(engine, VLLMEngine) and engine.llm is not None:
        return _decide_in_process(engine, requests)
    if isinstance(engine, OpenAIEngine):
        return _decide_served(engine, requests)
    raise ValueError(
        f"--reach needs the log-probabilities of vLLM: engine vllm or openai, not {engine.name!r}'s "
        f"{type(engine).__name__}"
    )


def _decide_in_process(engine, requests: Sequence[Request]) -> list[Decision]:
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    out: list[Decision | None] = [None] * len(requests)
    prompts, params, index = [], [], []
    for i, req in enumerate(requests):
        ready = prepare(req, engine.preset, engine.fitter)
        if isinstance(ready, Result):
            out[i] = Decision(error=ready.error)
            continue
        prompts.append(engine._prompt(ready[0]))
        params.append(
            SamplingParams(
                temperature=0.0,
                max_tokens=1,
                logprobs=TOP_K,
                structured_outputs=StructuredOutputsParams(regex=req.constraint()),
            )
        )
        index.append(i)
    # A cold grammar holds its request back and changes which requests share a forward step.
    engine._warm_grammars([requests[i].constraint() for i in index])
    for i, res in zip(
        index, engine.llm.generate(prompts, params, use_tqdm=False) if prompts else []
    ):
        completion = res.outputs[0]
        ids = tuple(res.prompt_token_ids or ())
        first = completion.logprobs[0] if completion.logprobs else {}
        out[i] = Decision(
            decision_logprobs({int(t): float(lp.logprob) for t, lp in first.items()}),
            completion.text,
            ids,
            len(ids),
        )
    return [d for d in out if d is not None]


def _decide_served(engine, requests: Sequence[Request]) -> list[Decision]:
    """One request at a time (the same batch each time, so the control measures the server's
    own noise), asking vLLM for the top log-probabilities by token id and the prompt's ids."""
    import httpx

    out = []
    with httpx.Client(
        base_url=engine.base_url, headers=engine.headers, timeout=engine.timeout_s
    ) as client:
        for req in requests:
            ready = prepare(req, engine.preset, engine.fitter)
            if isinstance(ready, Result):
                out.append(Decision(error=ready.error))
                continue
            payload = body(
                ready[0],
                engine.preset.quirks,
                engine.server_model["id"],
                0.0,
                engine.special_tokens,
            )
            payload.update(
                max_tokens=1,
                logprobs=True,
                top_logprobs=TOP_K,
                return_tokens_as_token_ids=True,
                return_token_ids=True,
            )
            r = client.post("/chat/completions", json=payload)
            if r.status_code >= 400:
                out.append(Decision(error=f"HTTP {r.status_code}: {r.text[:300]}"))
                continue
            data = r.json()
            choice = data["choices"][0]
            first = (choice.get("logprobs") or {}).get("content") or [{}]
            logprobs = {
                int(e["token"].removeprefix("token_id:")): float(e["logprob"])
                for e in first[0].get("top_logprobs") or []
            }
            ids = tuple(data.get("prompt_token_ids") or ())
            out.append(
                Decision(
                    decision_logprobs(logprobs),
                    choice["message"].get("content") or "",
                    ids,
                    int((data.get("usage") or {}).get("prompt_tokens") or len(ids)),
                )
            )
    return out


def reach_rows(
    model: str,
    engine,
    probes: Sequence[Probe],
    placeholders: dict[str, int],
    tolerance: float = TOLERANCE,
) -> list[dict]:
    """One row per probe: whether neutralising the modality moved the decision token
    (`moved`: None when a request failed), the difference, the control's noise, and the prompt
    length and placeholder counts of the cut and the neutralised request."""
    requests = [r for p in probes for r in (p.cut, p.blank, p.cut)]
    decisions = decide(engine, requests) if requests else []
    rows = []
    for k, probe in enumerate(probes):
        cut, blank, again = decisions[3 * k : 3 * k + 3]
        row: dict = {
            "model": model,
            "modality": probe.modality,
            "moved": None,
            "tokens": [cut.prompt_tokens, blank.prompt_tokens],
            "decision": [cut.token, blank.token],
            "placeholders": {
                m: [cut.prompt_ids.count(t), blank.prompt_ids.count(t)]
                for m, t in placeholders.items()
                if cut.prompt_ids.count(t)
            },
        }
        error = cut.error or blank.error or again.error
        if error:
            rows.append({**row, "error": error})
            continue
        delta, noise = (
            difference(cut.logprobs, blank.logprobs),
            difference(cut.logprobs, again.logprobs),
        )
        row.update(delta=delta, noise=noise, moved=bool(delta > tolerance and delta > noise))
        rows.append(row)
    return rows


def unreached(rows: Sequence[dict]) -> list[dict]:
    """The rows of a modality that did not move the output, or could not be probed."""
    return [r for r in rows if not r.get("skipped") and r.get("moved") is not True]


def sample_media(work: pathlib.Path) -> pathlib.Path:
    """The sample media the probes are cut from: the checkout's `.local/sample_media` when it
    holds them, else built into `work` (PyAV; speech needs espeak-ng, colors.mp4 stands in)."""
    from ..engines.presets import PACKAGE_ROOT
    from ..sample.media import build_sample_media

    prebuilt = PACKAGE_ROOT / ".local" / "sample_media"
    if (prebuilt / "colors.mp4").is_file():
        return prebuilt
    build_sample_media(work)
    return work


def run_reach(
    models: Sequence[str], engine: str, media_root: pathlib.Path, **options
) -> list[dict]:
    """Start each model on `engine` (vllm, or openai with `base_url`) and probe every media
    modality it takes. A model that takes none gets one skipped row; a modality this engine
    cannot run, one skipped row with the reason; a model that cannot start, one row naming why."""
    from ..engines import load_preset, make_engine
    from ..engines.identity import vllm_cpu_build

    rows: list[dict] = []
    for name in models:
        preset = load_preset(name)
        runtime = preset.on_runtime(cpu=engine == "vllm" and vllm_cpu_build())
        rows.extend(
            {
                "model": name,
                "modality": m,
                "moved": None,
                "skipped": True,
                "error": f"not run on this engine: {why}",
            }
            for m, why in sorted(runtime.unavailable.items())
        )
        probes = reach_probes(media_root, runtime.modalities)
        if not probes:
            rows.append(
                {
                    "model": name,
                    "modality": "(text only)",
                    "moved": None,
                    "skipped": True,
                    "error": "takes no media: nothing to neutralise",
                }
            )
            continue
        eng = None
        try:
            eng = make_engine(engine, preset, **options)
            rows.extend(reach_rows(name, eng, probes, placeholder_ids(preset.path)))
        except Exception as e:
            rows.append(
                {
                    "model": name,
                    "modality": "(start)" if eng is None else "(all)",
                    "moved": None,
                    "error": f"{type(e).__name__}: {e}",
                }
            )
        finally:
            if eng is not None:
                eng.close()
    return rows
