"""Ray engine: each stage batch runs over a Ray cluster with Ray Data LLM, one vLLM replica per
GPU (or per declared CPU bundle).

The driver renders and tokenizes every prompt itself (the model's own chat template over
neutralized text, exactly as the in-process engine does), so Ray's chat-template and tokenize
stages are off. A row carries its prompt's token ids, its sampling parameters (with the output constraint as vLLM's
`structured_outputs`) and its media as plain values: cited segments as `SegmentRef`s (file
digest, modality, start, end, cut options), cut by the worker where the file lives, never a
reader. Requests are checked and fitted to the model as in-process (`limits.prepare`): on the
driver when it holds the media, on the worker after the cut for segment references. Rows come
back in any order and are put back by their index. A row that fails (a cut, a request that
cannot fit, or vLLM) comes back with its error; the others are judged (`should_continue_on_error`).

Each `judge` call is one Ray Data job, which starts its replicas: give this engine large batches
(`batch_size` of the run) so start-up is paid once per stage, not once per small batch.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pickle
from collections.abc import Sequence

from ..media.segments import SegmentRef
from ..offline import LOCAL_DEFAULTS, OFFLINE_ENV
from .base import (
    EngineStats,
    Request,
    Result,
    build_messages,
    decoding,
    finish,
    record,
    with_p_yes,
)
from .confidence import LOGPROBS_MODE, MAX_TOP_LOGPROBS, Step, wants_p_yes
from .identity import effective_args, engine_identity, vllm_cpu_build
from .limits import RequestFitter, prepare
from .logprobs import LabelTokens
from .placement import lay_out, seen
from .presets import Preset
from .ray_rows import _postprocess, _preprocess
from .reach import labelled, placeholder_tokens
from .render import ChatRenderer
from .vllm import ENGINE_KEYS, structured_outputs_config


def _sampling(
    request: Request,
    temperature: float,
    extra_tokens: int,
    quirks=None,
    top_logprobs: int = MAX_TOP_LOGPROBS,
) -> dict:
    """A row's vLLM sampling parameters; a yes/no request asks its `top_logprobs` best
    alternatives (counted from its grammar: `LabelTokens.top_logprobs`)."""
    sp: dict = {"max_tokens": request.max_tokens() + extra_tokens}
    s = decoding(request, quirks)
    if s is None:
        sp["temperature"] = temperature
    else:
        sp.update(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k or -1, seed=s.seed)
    regex = request.constraint()
    if regex is not None:
        sp["structured_outputs"] = {"regex": regex}
    # The alternatives at the deciding token (p_yes). Every row carries an int: Ray Data batches
    # rows as columns, and a column of ints with gaps reaches vLLM as floats (5.0), which its
    # engine core cannot decode: it stops reading requests and the run hangs. 0 returns only the
    # chosen token's. The top k, not the label tokens by id: a list column of ids is untried
    # there, and k counted from the grammar holds every legal token where p_yes reads.
    sp["logprobs"] = int(top_logprobs) if wants_p_yes(request.verdict) else 0
    return sp


def _count(value: object) -> int | None:
    """A count column's value: None where the row has none (-1, null, or NaN: a batch with gaps
    reads ints back as floats)."""
    if value is None or not isinstance(value, int | float) or value != value or value < 0:
        return None
    return int(value)


def _steps(row: dict, top: int | None) -> list[Step] | None:
    """A row's `steps` column (`ray_rows._steps_json`) as `Step`s of a top-`top` answer."""
    text = row.get("steps") or ""
    if not text:
        return None
    steps = []
    for token, alternatives, *chosen in json.loads(text):
        value = chosen[0] if chosen else None
        pairs = tuple((a, float(lp)) for a, lp in alternatives)
        steps.append(Step(token, pairs, None if value is None else float(value), top))
    return steps


def _cited(request: Request, column: str) -> dict:
    """A row's per-citation reach (`ray_rows._arrived_json`) as `Result` fields, each part named
    by the request's own (a segment reference by its citation)."""
    if not request.media:
        return {}
    if not column:
        return {"cited_unknown": "the Ray job returned no per-citation counts"}
    found = json.loads(column)
    if "parts" not in found:
        return {"cited_unknown": str(found.get("unknown"))}
    parts = found["parts"]
    if len(parts) != len(request.media):
        return {"cited_unknown": "the Ray job counted other parts than the request holds"}
    return {
        "cited": labelled(
            request, [(m, int(n)) for m, n, _, _ in parts], [(int(a), int(b)) for *_, a, b in parts]
        )
    }


def _worker_env() -> dict:
    env = {**OFFLINE_ENV, **LOCAL_DEFAULTS}
    for key in (
        "VLLM_CPU_KVCACHE_SPACE",
        "VLLM_HOST_IP",
        "VLLM_LOGGING_LEVEL",
        "VLLM_LOGGING_STREAM",
        "MURGAT_MODELS_DIR",
    ):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class RayEngine:
    """Judges on a Ray cluster (`address`; none: a local Ray of its own is started, whatever else
    runs on the machine; "auto": the machine's own cluster) with Ray Data LLM."""

    def __init__(
        self,
        preset: Preset,
        *,
        temperature: float = 0.0,
        address: str | None = None,
        replicas: int = 1,
        replica_resources: dict | None = None,
        rows_per_batch: int = 16,
        local_cpus: int = 4,
        **engine_args,
    ):
        import ray
        from ray.data.llm import Processor, build_processor, vLLMEngineProcessorConfig
        from vllm.config import StructuredOutputsConfig

        self._own_ray = False  # whether this engine started the local Ray it shuts down
        path = preset.require_path()
        # The layout for the GPUs a local Ray has (a `LazyEngine` chose it already).
        preset = lay_out(preset, seen("ray", {"address": address}))
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
            else:
                # A Ray of this run's own, even where another runs on the machine or RAY_ADDRESS
                # is set ("local"; with no address Ray joins those and then refuses these
                # resources); its resources declared logically (fewer than 4 CPUs deadlocks it).
                ray.init(
                    address="local",
                    num_cpus=max(local_cpus, 4),
                    include_dashboard=False,
                    runtime_env={"env_vars": env},
                    log_to_driver=False,
                )
        ctx = ray.data.DataContext.get_current()
        ctx.wait_for_min_actors_s = 900  # every replica up before work is handed out
        ctx.enable_progress_bars = False
        kwargs = dict(self._args)
        kwargs["structured_outputs_config"] = StructuredOutputsConfig(
            **structured_outputs_config(kwargs.pop("reasoning_parser", None))
        )
        kwargs["trust_remote_code"] = preset.trust_remote_code
        kwargs["logprobs_mode"] = LOGPROBS_MODE  # what p_yes reads (`confidence.LOGPROBS_MODE`)
        cpu = vllm_cpu_build()
        config = vLLMEngineProcessorConfig(
            model_source=str(path),
            engine_kwargs=kwargs,
            runtime_env={"env_vars": env},
            concurrency=(replicas, replicas),
            batch_size=rows_per_batch,
            max_concurrent_batches=4,
            max_tasks_in_flight_per_actor=4,
            accelerator_type=None,
            log_engine_metrics=False,
            placement_group_config={"bundles": [replica_resources or {"CPU": 1}]}
            if cpu or replica_resources
            else None,
            chat_template_stage=False,
            tokenize_stage=False,
            detokenize_stage=False,
            prepare_multimodal_stage=False,
            should_continue_on_error=True,
        )
        self.fitter = RequestFitter(preset, self._args, self.renderer)
        post = functools.partial(
            _postprocess,
            placeholders=placeholder_tokens(path, self.renderer.tokenizer),
            bos_id=self.renderer.tokenizer.bos_token_id,
        )
        fallback = self.renderer.prompt_ids(build_messages(Request("Reply."), preset.quirks)[0])
        small = {"num_cpus": 0.25}
        prep = functools.partial(_preprocess, fallback=fallback, preset=preset, args=self._args)
        self.processor: Processor | None = build_processor(
            config,
            preprocess=prep,
            postprocess=post,
            preprocess_map_kwargs=small,
            postprocess_map_kwargs=small,
        )

    @property
    def identity(self) -> str:
        return engine_identity("ray", self.preset, self.temperature, self._args)

    @functools.cached_property
    def _labels(self) -> LabelTokens:
        return LabelTokens(self.renderer.tokenizer)

    def top_logprobs(self, request: Request) -> int:
        """The top alternatives a yes/no request asks for, counted from its grammar and the
        model's vocabulary (`LabelTokens.top_logprobs`)."""
        return self._labels.top_logprobs(request.constraint())

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        import ray

        results: list[Result | None] = [None] * len(requests)
        notes: dict[int, str | None] = {}
        tops: dict[int, int] = {}  # the top k each row asks for (0: none)
        rows = []
        extra = self.preset.quirks.extra_output_tokens
        for i, req in enumerate(requests):
            # Media held here are fitted here; segment references where they are cut (a
            # reference is never a clip to turn into frames: image-only models get cut media).
            by_ref = any(isinstance(m, SegmentRef) for m in req.media)
            ready = prepare(req, self.preset, None if by_ref else self.fitter)
            if isinstance(ready, Result):
                results[i] = ready
                continue
            req, notes[i], blocks = ready
            try:
                messages, _ = build_messages(req, self.preset.quirks)
                tops[i] = self.top_logprobs(req) if wants_p_yes(req.verdict) else 0
                rows.append(
                    {
                        "idx": i,
                        "prompt_ids": self.renderer.prompt_ids(messages),
                        "sampling": json.dumps(
                            _sampling(req, self.temperature, extra, self.preset.quirks, tops[i])
                        ),
                        "request": pickle.dumps(req),
                        # How many parts sent each cited part became: the worker measures each.
                        "blocks": json.dumps(list(blocks)),
                    }
                )
            except Exception as e:
                results[i] = Result(error=f"could not build the prompt ({type(e).__name__}: {e})")
        if rows:
            import time

            t0 = time.perf_counter()
            assert self.processor is not None, "the engine is closed"
            done = self.processor(ray.data.from_items(rows)).take_all()
            # A thinking judge's thought cut at its budget: closed, its verdict decoded next.
            done = self._close_cut_thoughts(rows, done)
            self.stats.wall_s += time.perf_counter() - t0
            for row in done:
                i = int(row["idx"])
                if row["row_error"]:
                    results[i] = Result(error=row["row_error"])
                elif row["engine_error"]:
                    results[i] = Result(
                        error=f"the engine failed on this request ({row['engine_error']})"
                    )
                else:
                    res = finish(
                        requests[i], row["text"], row["prompt_tokens"], row["output_tokens"]
                    )
                    res = with_p_yes(requests[i], res, _steps(row, tops.get(i) or None))
                    res = dataclasses.replace(res, thought_cut=bool(row.get("thought_cut")))
                    reach = (
                        {"reached": json.loads(row["reached"])}
                        if row.get("reached")
                        else {"reached_unknown": "the Ray job returned no prompt token ids"}
                    )
                    printed: dict = {  # Ray Data columns hold no None: "" and -1 stand for it
                        "prompt_digest": row.get("prompt_digest") or None,
                        "bos_count": _count(row.get("bos_count")),
                    }
                    results[i] = dataclasses.replace(
                        res,
                        note=row["note"] or notes.get(i),
                        **reach,
                        **_cited(requests[i], row.get("cited") or ""),
                        **printed,
                    )
            missing = [i for i, r in enumerate(results) if r is None]
            for i in missing:  # never silently lost
                results[i] = Result(error="the Ray job returned no row for this request")
        final = [r for r in results if r is not None]
        record(self.stats, final)
        return final

    def _close_cut_thoughts(self, rows: list[dict], done: list[dict]) -> list[dict]:
        """`done` with each cut thought (a thinking judge's constrained row that used its whole
        budget without closing) closed and its verdict decoded in a second pass over those rows:
        the prompt ids sent + the thought's + `thought.CLOSE`, under the grammar, with the
        verdict's own budget (vLLM reads the tag in the prompt as the end of reasoning)."""
        import ray

        from .thought import CLOSE

        if not self.preset.quirks.thinking:
            return done
        sent = {int(r["idx"]): r for r in rows}
        cut = {}
        for row in done:
            i = int(row["idx"])
            req = pickle.loads(sent[i]["request"])
            budget = json.loads(sent[i]["sampling"])["max_tokens"]
            if (
                req.constraint() is not None
                and not row["row_error"]
                and not row["engine_error"]
                and row["output_tokens"] >= budget
                and "</think>" not in row["text"]
            ):
                cut[i] = (req, row)
        if not cut:
            return done
        close = self.renderer.tokenizer.encode(CLOSE, add_special_tokens=False)
        again = []
        for i, (req, row) in cut.items():
            sampling = json.loads(sent[i]["sampling"])
            sampling["max_tokens"] = req.max_tokens()
            ids = [*sent[i]["prompt_ids"], *json.loads(row["generated"]), *close]
            again.append({**sent[i], "prompt_ids": ids, "sampling": json.dumps(sampling)})
        assert self.processor is not None, "the engine is closed"
        seconds = {int(r["idx"]): r for r in self.processor(ray.data.from_items(again)).take_all()}
        out = []
        for row in done:
            i, second = int(row["idx"]), seconds.get(int(row["idx"]))
            if i in cut and second and not second["row_error"] and not second["engine_error"]:
                row = {
                    **row,
                    "text": row["text"] + CLOSE + second["text"],
                    "output_tokens": row["output_tokens"] + len(close) + second["output_tokens"],
                    "steps": second["steps"],
                    "thought_cut": True,
                }
            out.append(row)
        return out

    def close(self) -> None:
        self.processor = None
        if self._own_ray:
            import ray

            ray.shutdown()
