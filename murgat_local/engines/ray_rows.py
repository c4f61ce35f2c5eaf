"""What a Ray worker does to each row of a batch, around vLLM: `_preprocess` and `_postprocess`.

Before vLLM, a row's segment references are cut where the file lives and its request fitted to
the model by one processor per worker process and model (a row that cannot go on keeps its
place with a one-token stand-in and its error); after, the row's answer, counts and the
generated tokens' alternatives become plain columns. Apart from `ray.py`, which drives the
cluster from the driver, because this code runs in the workers' processes and holds their own
state (`_worker_fitters`).
"""

from __future__ import annotations

import dataclasses
import json
import pickle

from ..media.segments import SegmentRef, cut_ref
from .base import Request
from .expect import PartTokens
from .limits import Fitted, RequestFitter, fit_or_refuse
from .logprobs import from_vllm
from .presets import Preset
from .reach import arrivals, count, placeholder_tokens, prompt_print
from .render import ChatRenderer
from .vllm import multimodal_inputs


def _stand_in(sampling: dict) -> dict:
    """A stand-in row's sampling: one greedy token, free, with the same keys and types as the
    rows beside it (see `ray._sampling`)."""
    return {
        **{k: v for k, v in sampling.items() if k != "structured_outputs"},
        "temperature": 0.0,
        "max_tokens": 1,
    }


def _steps_json(row: dict) -> str:
    """The generated tokens' alternatives as JSON (`confidence.Step`s: text, alternatives, the
    chosen token's own number), "" where none came."""
    steps = from_vllm(row.get("generated_tokens") or [], row.get("logprobs"))
    return json.dumps([[s.token, s.alternatives, s.logprob] for s in steps]) if steps else ""


_worker_fitters: dict[str, RequestFitter] = {}
_worker_part_tokens: dict[str, PartTokens] = {}


def _fitter(preset: Preset, args: dict) -> RequestFitter:
    """One fitter (the model's processor) per worker process and model."""
    key = json.dumps([preset.name, str(preset.path), args], sort_keys=True, default=str)
    if key not in _worker_fitters:
        renderer = ChatRenderer(
            preset.require_path(), preset, trust_remote_code=preset.trust_remote_code
        )
        _worker_fitters[key] = RequestFitter(preset, args, renderer)
    return _worker_fitters[key]


def _part_tokens(preset: Preset, args: dict) -> PartTokens:
    """One per-part token counter (`expect.PartTokens`) per worker process and model, on the
    worker's fitter's processor."""
    key = json.dumps([preset.name, str(preset.path), args], sort_keys=True, default=str)
    if key not in _worker_part_tokens:
        renderer = _fitter(preset, args).renderer
        placeholders = placeholder_tokens(preset.require_path(), renderer.tokenizer)
        _worker_part_tokens[key] = PartTokens(preset, renderer, placeholders)
    return _worker_part_tokens[key]


def _expected_json(request: Request, blocks: list[int] | None, preset: Preset, args: dict) -> str:
    """Each cited part's expected tokens as JSON (`{"parts": [[modality, n], ...]}`), or why
    they are not known (`{"unknown": ...}`); "" for a request without media."""
    if not request.media:
        return ""
    try:
        found = _part_tokens(preset, args).expected(request, blocks)
    except Exception as e:
        found = f"could not load the model's processor on this worker ({type(e).__name__}: {e})"
    return json.dumps({"unknown": found} if isinstance(found, str) else {"parts": found})


def _cut_and_fit(request: Request, preset: Preset, args: dict) -> Fitted | str:
    """The request with its segment references cut and, since those were not fitted on the
    driver, fitted to the model; or the error its row carries."""
    if not any(
        isinstance(m, SegmentRef) for m in request.media
    ):  # held by the driver, fitted there
        return Fitted(request)
    try:
        media = tuple(cut_ref(m) if isinstance(m, SegmentRef) else m for m in request.media)
    except Exception as e:
        return f"could not cut the cited segment ({type(e).__name__}: {e})"
    cut = dataclasses.replace(request, media=media)
    try:
        fitter = _fitter(preset, args)
    except Exception as e:
        return f"could not load the model's processor on this worker ({type(e).__name__}: {e})"
    return fit_or_refuse(fitter, cut)


def _preprocess(row: dict, fallback: list[int], preset: Preset, args: dict) -> dict:
    """On a worker: cut the row's segments, fit the request to the model (as the driver does for
    media it holds), and hand vLLM its prompt, media and sampling. A row that cannot go on gets
    a one-token stand-in prompt, which keeps its place in the batch, and its error."""
    out = {
        "idx": row["idx"],
        "row_error": "",
        "note": "",
        "tokenized_prompt": [int(t) for t in row["prompt_ids"]],
        "sampling_params": json.loads(row["sampling"]),
        "expected": "",
    }
    request = pickle.loads(row["request"])
    fitted = _cut_and_fit(request, preset, args)
    if isinstance(fitted, str):
        out.update(
            row_error=fitted,
            tokenized_prompt=fallback,
            sampling_params=_stand_in(out["sampling_params"]),
        )
        return out
    out["note"] = fitted.note or ""
    # The parts as vLLM gets them: a reference cut here is sent as it is cut (one part each).
    blocks = json.loads(row["blocks"]) if row.get("blocks") else None
    out["expected"] = _expected_json(fitted.request, blocks, preset, args)
    data, processor_kwargs = multimodal_inputs(fitted.request.media)
    if data:
        out["multimodal_data"] = data
    if processor_kwargs:
        out["mm_processor_kwargs"] = processor_kwargs
    return out


def _arrived_json(expected: str, ids, placeholders: dict[int, str]) -> str:
    """The per-part reach of a row (`reach.arrivals`) as JSON: `{"parts": [[modality, expected,
    arrived, alt], ...]}`, or the reason it is unknown (`{"unknown": ...}`); "" without media."""
    if not expected:
        return ""
    found = json.loads(expected)
    if "parts" not in found:
        return expected
    if ids is None:
        return json.dumps({"unknown": "the Ray job returned no prompt token ids"})
    parts = [(str(m), int(n)) for m, n in found["parts"]]
    got = arrivals(parts, ids, placeholders)
    return json.dumps({"parts": [[m, n, a, b] for (m, n), (a, b) in zip(parts, got)]})


def _postprocess(row: dict, placeholders: dict[int, str], bos_id: int | None = None) -> dict:
    ids = row.get("prompt_token_ids")  # vLLM's, its placeholders expanded: what reached the model
    ids = None if ids is None else [int(t) for t in ids]
    printed = prompt_print(ids, bos_id)
    return {
        "prompt_digest": printed.get("prompt_digest") or "",
        "bos_count": -1 if printed.get("bos_count") is None else printed["bos_count"],
        "idx": row["idx"],
        "text": row.get("generated_text") or "",
        "note": row.get("note") or "",
        "reached": json.dumps(count(ids, placeholders)) if ids is not None else "",
        "cited": _arrived_json(row.get("expected") or "", ids, placeholders),
        "prompt_tokens": int(row.get("num_input_tokens") or 0),
        "output_tokens": int(row.get("num_generated_tokens") or 0),
        "steps": _steps_json(row),
        # The generated ids, where a cut thought is continued from (`_close_cut_thoughts`).
        "generated": json.dumps([int(t) for t in row.get("generated_tokens") or []]),
        "row_error": row.get("row_error") or "",
        "engine_error": row.get("__inference_error__") or "",
    }
