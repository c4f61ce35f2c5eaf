"""Ray engine: each stage batch runs over a Ray cluster with Ray Data LLM, one vLLM replica per
GPU (or per declared CPU bundle).

The driver renders every prompt itself (the model's own chat template over neutralized text,
exactly as the in-process engine does), so Ray's chat-template and tokenize stages are off. A
row carries its prompt, its sampling parameters (with the output constraint as vLLM's
`structured_outputs`) and its media as plain values: cited segments as `SegmentRef`s (file
digest, modality, start, end, cut options), cut by the worker where the file lives, never a
reader. Rows come back in any order and are put back by their index. A row that fails (a cut,
or vLLM) comes back with its error; the others are judged (`should_continue_on_error`).

Each `judge` call is one Ray Data job, which starts its replicas: give this engine large batches
(`batch_size` of the run) so start-up is paid once per stage, not once per small batch.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
from typing import Sequence

from ..media.segments import SegmentRef, cut_ref
from ..offline import LOCAL_DEFAULTS, OFFLINE_ENV
from .base import EngineStats, Request, Result, build_messages, finish, record, refusal
from .identity import effective_args, engine_identity, vllm_cpu_build
from .presets import Preset
from .render import ChatRenderer, adapt_media
from .vllm import ENGINE_KEYS, multimodal_inputs, structured_outputs_config


def _sampling(request: Request, temperature: float, extra_tokens: int) -> dict:
    sp: dict = {"max_tokens": request.max_tokens() + extra_tokens}
    s = request.sampling
    if s is None:
        sp["temperature"] = temperature
    else:
        sp.update(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k or -1, seed=s.seed)
    regex = request.constraint()
    if regex is not None:
        sp["structured_outputs"] = {"regex": regex}
    return sp


def _preprocess(row: dict, fallback: str) -> dict:
    """On a worker: cut the row's segments and hand vLLM its prompt, media and sampling."""
    out = {"idx": row["idx"], "cut_error": "", "prompt": row["prompt"], "sampling_params": json.loads(row["sampling"])}
    try:
        media = [cut_ref(m) if isinstance(m, SegmentRef) else m for m in pickle.loads(row["media"])]
    except Exception as e:  # this row only: a one-token stand-in keeps its place in the batch
        out.update(cut_error=f"could not cut the cited segment ({type(e).__name__}: {e})", prompt=fallback,
                   sampling_params={"temperature": 0.0, "max_tokens": 1})
        return out
    data, processor_kwargs = multimodal_inputs(media)
    if data:
        out["multimodal_data"] = data
    if processor_kwargs:
        out["mm_processor_kwargs"] = processor_kwargs
    return out


def _postprocess(row: dict) -> dict:
    return {"idx": row["idx"], "text": row.get("generated_text") or "",
            "prompt_tokens": int(row.get("num_input_tokens") or 0),
            "output_tokens": int(row.get("num_generated_tokens") or 0),
            "error": row.get("cut_error") or row.get("__inference_error__") or ""}


def _worker_env() -> dict:
    env = {**OFFLINE_ENV, **LOCAL_DEFAULTS}
    for key in ("VLLM_CPU_KVCACHE_SPACE", "VLLM_HOST_IP", "VLLM_LOGGING_LEVEL", "VLLM_LOGGING_STREAM",
                "MURGAT_MODELS_DIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class RayEngine:
    """Judges on a Ray cluster (`address`; none: a local Ray is started) with Ray Data LLM."""

    def __init__(self, preset: Preset, *, temperature: float = 0.0, address: str | None = None,
                 replicas: int = 1, replica_resources: dict | None = None, rows_per_batch: int = 16,
                 local_cpus: int = 4, **engine_args):
        import ray
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig
        from vllm.config import StructuredOutputsConfig

        path = preset.require_path()
        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.stats = EngineStats()
        self.temperature = temperature
        self._args = effective_args("ray", preset, engine_args)
        unknown = set(self._args) - ENGINE_KEYS
        if unknown:
            raise ValueError(f"preset {preset.name}: unknown engine arguments {sorted(unknown)}")
        self.renderer = ChatRenderer(path, preset, trust_remote_code=preset.trust_remote_code)
        env = _worker_env()
        self._own_ray = not ray.is_initialized()
        if self._own_ray:
            if address:
                ray.init(address=address, runtime_env={"env_vars": env}, log_to_driver=False)
            else:  # a local Ray; resources declared logically (fewer than 4 CPUs deadlocks it)
                ray.init(num_cpus=max(local_cpus, 4), include_dashboard=False,
                         runtime_env={"env_vars": env}, log_to_driver=False)
        ctx = ray.data.DataContext.get_current()
        ctx.wait_for_min_actors_s = 900  # every replica up before work is handed out
        ctx.enable_progress_bars = False
        kwargs = dict(self._args)
        kwargs["structured_outputs_config"] = StructuredOutputsConfig(
            **structured_outputs_config(kwargs.pop("reasoning_parser", None)))
        kwargs["trust_remote_code"] = preset.trust_remote_code
        cpu = vllm_cpu_build()
        config = vLLMEngineProcessorConfig(
            model_source=str(path), engine_kwargs=kwargs, runtime_env={"env_vars": env},
            concurrency=(replicas, replicas), batch_size=rows_per_batch, max_concurrent_batches=4,
            max_tasks_in_flight_per_actor=4, accelerator_type=None, log_engine_metrics=False,
            placement_group_config={"bundles": [replica_resources or {"CPU": 1}]} if cpu or replica_resources else None,
            chat_template_stage=False, tokenize_stage=False, detokenize_stage=False,
            prepare_multimodal_stage=False, should_continue_on_error=True)
        fallback = self.renderer.render(build_messages(Request("Reply."), preset.quirks)[0])
        small = {"num_cpus": 0.25}
        self.processor = build_processor(config, preprocess=functools.partial(_preprocess, fallback=fallback),
                                         postprocess=_postprocess, preprocess_map_kwargs=small,
                                         postprocess_map_kwargs=small)

    @property
    def identity(self) -> str:
        return engine_identity("ray", self.preset, self.temperature, self._args)

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        import ray

        results: list[Result | None] = [None] * len(requests)
        rows = []
        extra = self.preset.quirks.extra_output_tokens
        for i, req in enumerate(requests):
            req = adapt_media(req, self.preset)  # cut clips to frames for image-only models
            reason = refusal(req, self.name, self.modalities)
            if reason:
                results[i] = Result(error=reason)
                continue
            try:
                messages, media = build_messages(req, self.preset.quirks)
                rows.append({"idx": i, "prompt": self.renderer.render(messages),
                             "sampling": json.dumps(_sampling(req, self.temperature, extra)),
                             "media": pickle.dumps(tuple(media))})
            except Exception as e:
                results[i] = Result(error=f"could not build the prompt ({type(e).__name__}: {e})")
        if rows:
            import time

            t0 = time.perf_counter()
            done = self.processor(ray.data.from_items(rows)).take_all()
            self.stats.wall_s += time.perf_counter() - t0
            for row in done:
                i = int(row["idx"])
                if row["error"]:
                    results[i] = Result(error=f"the engine failed on this request ({row['error']})"
                                        if not row["error"].startswith("could not cut") else row["error"])
                else:
                    results[i] = finish(requests[i], row["text"], row["prompt_tokens"], row["output_tokens"])
            missing = [i for i, r in enumerate(results) if r is None]
            for i in missing:  # never silently lost
                results[i] = Result(error="the Ray job returned no row for this request")
        final = [r for r in results if r is not None]
        record(self.stats, final)
        return final

    def close(self) -> None:
        self.processor = None
        if getattr(self, "_own_ray", False):
            import ray

            ray.shutdown()
