"""vLLM in-process engine (`vllm.LLM`), the default.

A whole batch goes to one `LLM.generate` call so continuous batching and prefix caching work.
Each request carries its verdict type's regex as a per-request structured-output constraint;
whitespace is disabled engine-wide (vLLM ignores the per-request flag). The chat template is
rendered and tokenized here, from the model directory's own processor or tokenizer, after every
text part has been neutralized, so no message can forge a turn; vLLM gets the token ids.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

from ..media.parts import AudioPart, ImagePart, VideoPart
from .base import (
    EngineStats,
    Request,
    Result,
    Timer,
    build_messages,
    decoding,
    finish,
    record,
    with_p_yes,
)
from .confidence import LOGPROBS_MODE, wants_p_yes
from .expect import PartTokens
from .identity import effective_args, engine_identity, vllm_cpu_build
from .limits import RequestFitter, prepare
from .logprobs import LabelTokens, from_vllm
from .presets import Preset
from .reach import cited_fields, count, placeholder_tokens, prompt_print
from .render import ChatRenderer, video_metadata
from .thought import close_cut_thoughts

# Engine arguments a preset may set; anything else in [engine] is refused early.
ENGINE_KEYS = {
    "dtype",
    "max_model_len",
    "max_num_seqs",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "limit_mm_per_prompt",
    "enforce_eager",
    "gpu_memory_utilization",
    "max_num_batched_tokens",
    "block_size",
    "enable_prefix_caching",
    "enable_chunked_prefill",
    "mm_processor_cache_gb",
    "kv_cache_dtype",
    "kv_cache_memory_bytes",
    "quantization",
    "reasoning_parser",
    "seed",
}


def multimodal_inputs(media) -> tuple[dict[str, list], dict]:
    """vLLM's `multi_modal_data` and `mm_processor_kwargs` for cut media parts."""
    data: dict[str, list] = {}
    processor_kwargs: dict = {}
    for part in media:
        if isinstance(part, ImagePart):
            data.setdefault("image", []).append(part.pixels)
        elif isinstance(part, VideoPart):
            # Frames travel with their metadata: Gemma 4 and Qwen3-VL refuse a clip without it
            # and stamp each frame with its time from it; vLLM drops it for the models that
            # take none. Qwen-Omni is one of those, and the frame rate reaches its processor
            # (temporal positions) only through mm_processor_kwargs.
            data.setdefault("video", []).append((part.frames, video_metadata(part)))
            processor_kwargs["fps"] = part.fps
        elif isinstance(part, AudioPart):
            data.setdefault("audio", []).append((part.waveform, part.sample_rate))
    return data, processor_kwargs


def structured_outputs_config(reasoning_parser: str | None) -> dict:
    """Engine-wide structured output: xgrammar, no free whitespace (vLLM ignores the
    per-request flag), and a thinking model's reasoning parser."""
    structured = {"backend": "xgrammar", "disable_any_whitespace": True}
    if reasoning_parser:
        structured["reasoning_parser"] = reasoning_parser
    return structured


def p_yes_logprobs(
    request: Request, label_ids: Sequence[int] | None, top: Callable[[Request], int]
) -> dict:
    """The `SamplingParams` a request needs for p_yes: the log-probabilities of the tokens that
    can decide its label (vLLM gathers those few from the masked logits, in place of a top-k
    over the vocabulary at every generated token), else the `top(request)` best alternatives
    (counted from its grammar); nothing when its verdict is not yes/no."""
    if not wants_p_yes(request.verdict):
        return {}
    return {"logprob_token_ids": list(label_ids)} if label_ids else {"logprobs": top(request)}


class VLLMEngine:
    """Judges on `vllm.LLM`. Create it under `if __name__ == "__main__":` (vLLM spawns)."""

    def __init__(self, preset: Preset, *, temperature: float = 0.0, **overrides):
        from vllm import LLM

        path = preset.require_path()
        preset = preset.on_runtime(cpu=vllm_cpu_build())
        if not vllm_cpu_build():  # the layout the preset needs for the GPUs this process sees
            from .fit import seen_gpus

            seen = seen_gpus()
            preset = preset.on_gpus(*seen) if seen else preset
        args = effective_args("vllm", preset, overrides)
        self._engine_args = dict(args)
        unknown = set(args) - ENGINE_KEYS
        if unknown:
            raise ValueError(f"preset {preset.name}: unknown engine arguments {sorted(unknown)}")
        structured = structured_outputs_config(args.pop("reasoning_parser", None))
        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.stats = EngineStats()
        self.temperature = temperature
        self.llm: LLM | None = LLM(
            model=str(path),
            trust_remote_code=preset.trust_remote_code,
            structured_outputs_config=structured,
            logprobs_mode=LOGPROBS_MODE,  # what p_yes reads (not the verdict): not in identity
            **args,
        )
        self.renderer = ChatRenderer(path, preset, trust_remote_code=preset.trust_remote_code)
        self.placeholders = placeholder_tokens(path, self.renderer.tokenizer)
        self.part_tokens = PartTokens(preset, self.renderer, self.placeholders)
        self._warm: set[str] = set()  # output grammars this engine has compiled
        # Checks every request against limit_mm_per_prompt and max_model_len before vLLM sees it.
        self.fitter: RequestFitter | None = RequestFitter(preset, self._engine_args, self.renderer)

    @property
    def identity(self) -> str:
        return engine_identity("vllm", self.preset, self.temperature, self._engine_args)

    @property
    def special_tokens(self) -> list[str]:
        return self.renderer.special_tokens

    @functools.cached_property
    def label_ids(self) -> tuple[int, ...] | None:
        """The tokens that can decide a yes/no verdict (`LabelTokens.ids`), found once."""
        return self._labels.ids

    @functools.cached_property
    def _labels(self) -> LabelTokens:
        return LabelTokens(self.renderer.tokenizer)

    def top_logprobs(self, request: Request) -> int:
        """The top alternatives a yes/no request asks for where the label tokens are not asked
        by id: counted from its grammar (`LabelTokens.top_logprobs`)."""
        return self._labels.top_logprobs(request.constraint())

    def _sampling(self, request: Request):
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        regex = request.constraint()
        structured = None if regex is None else StructuredOutputsParams(regex=regex)
        logprobs = p_yes_logprobs(request, self.label_ids, self.top_logprobs)
        max_tokens = request.max_tokens() + self.preset.quirks.extra_output_tokens
        s = decoding(request, self.preset.quirks)
        if s is None:  # a judge: the engine's decoding settings
            return SamplingParams(
                temperature=self.temperature,
                max_tokens=max_tokens,
                structured_outputs=structured,
                **logprobs,
            )
        return SamplingParams(
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k or -1,
            seed=s.seed,
            max_tokens=max_tokens,
            structured_outputs=structured,
            **logprobs,
        )

    def _prompt(self, request: Request) -> dict:
        messages, media = build_messages(request, self.preset.quirks)
        data, processor_kwargs = multimodal_inputs(media)
        # Token ids, not text: vLLM would tokenize a text prompt with its family's own default
        # for special tokens (Gemma 4: none, so no BOS; Gemma 3: a second BOS).
        prompt: dict = {"prompt_token_ids": self.renderer.prompt_ids(messages)}
        if data:
            prompt["multi_modal_data"] = data
        if processor_kwargs:
            prompt["mm_processor_kwargs"] = processor_kwargs
        return prompt

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        results: list[Result | None] = [None] * len(requests)
        notes: dict[int, str | None] = {}
        expected: dict[int, list[tuple[str, int]] | str] = {}
        prompts, params, index = [], [], []
        for i, req in enumerate(requests):
            ready = prepare(req, self.preset, self.fitter)
            if isinstance(ready, Result):
                results[i] = ready
                continue
            req, notes[i], blocks = ready
            try:
                prompts.append(self._prompt(req))
            except Exception as e:  # a bad media item fails its own request only
                results[i] = Result(error=f"could not build the prompt: {e}")
                continue
            if req.media:  # what each cited part should place, measured on the parts sent
                expected[i] = self.part_tokens.expected(req, blocks)
            params.append(self._sampling(req))
            index.append(i)
        self._warm_grammars([requests[i].constraint() for i in index])
        with Timer(self.stats):
            outputs = self._generate(prompts, params) if prompts else []
            outputs = close_cut_thoughts(
                self, [requests[i] for i in index], prompts, params, outputs
            )
        for i, out, sent in zip(index, outputs, params):
            if isinstance(out, Exception):
                results[i] = Result(
                    error=f"the engine failed on this request ({type(out).__name__}: {out})"
                )
                continue
            completion = out.outputs[0]
            ids = out.prompt_token_ids or []  # as the processor expanded them: one per media token
            res = finish(requests[i], completion.text, len(ids), len(completion.token_ids))
            top = None if sent.logprob_token_ids else sent.logprobs  # a top-k answer's k
            steps = from_vllm(completion.token_ids, completion.logprobs, top)
            res = with_p_yes(requests[i], res, steps)
            if getattr(out, "thought_cut", False):  # closed at its budget (`engines.thought`)
                res = dataclasses.replace(
                    res, thought_cut=True, output_tokens=completion.total_tokens
                )
            results[i] = dataclasses.replace(
                res,
                note=notes.get(i),
                reached=count(ids, self.placeholders),
                **cited_fields(requests[i], expected.get(i), ids, self.placeholders),
                **prompt_print(ids, self.renderer.tokenizer.bos_token_id),
            )
        final = [r for r in results if r is not None]
        assert len(final) == len(requests)
        record(self.stats, final)
        return final

    def _warm_grammars(self, regexes: list[str | None]) -> None:
        """Compile each new output grammar with a one-token request before the batch that needs
        it. vLLM holds a request back until its grammar is compiled, so a cold grammar changes
        which requests share a forward step, and on the CPU that changes the rounding: with
        every grammar warm, a batch is computed the same way whenever it runs (a resumed run
        sends the batches an uninterrupted run sent, and gets the same verdicts)."""
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        new = [r for r in dict.fromkeys(regexes) if r is not None and r not in self._warm]
        if not new:
            return
        params = [
            SamplingParams(
                temperature=0.0, max_tokens=1, structured_outputs=StructuredOutputsParams(regex=r)
            )
            for r in new
        ]
        try:
            # A real chat prompt, as requests look (a one-token raw prompt kills some models).
            warm = self._prompt(Request("Reply with the requested format."))
            prompts: list = [warm] * len(new)
            assert self.llm is not None, "the engine is closed"
            self.llm.generate(prompts, params, use_tqdm=False)
        except Exception:
            return  # the real batch will meet (and report) whatever went wrong
        self._warm.update(new)

    def _generate(self, prompts: list, params: list) -> list:
        """Outputs in order; when vLLM rejects a batch, it is split in halves until the request
        it rejects fails alone (as its exception) and every other request is judged."""
        assert self.llm is not None, "the engine is closed"
        try:
            return list(self.llm.generate(prompts, params, use_tqdm=False))
        except Exception as e:
            if len(prompts) == 1:
                return [e]
            self.stats.batch_splits += 1
            mid = len(prompts) // 2
            return self._generate(prompts[:mid], params[:mid]) + self._generate(
                prompts[mid:], params[mid:]
            )

    def close(self) -> None:
        llm = getattr(self, "llm", None)
        if llm is not None:
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception:
                pass
            self.llm = None
