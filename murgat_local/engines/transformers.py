"""transformers engine: the fallback, one request at a time, on the GPU when there is one.

On a GPU the model is spread over the visible devices (`device_map="auto"`) in the preset's dtype;
without one it runs on the CPU in float32 (`identity.transformers_placement`, named in the
identity).

Inputs are built with the model directory's own processor, so one request may mix images, video
and audio. The verdict grammar is enforced by an outlines-core logits processor compiled from
the same regex the vLLM engine uses; indexes are compiled once per verdict type. A yes/no
verdict's p_yes is read from each step's scores as that processor leaves them: after the mask,
before the sampling warpers (temperature, top-p, top-k), which transformers applies after the
processors it is given.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from .base import (
    EngineStats,
    Request,
    Result,
    Timer,
    build_messages,
    decoding,
    finish,
    record,
    refusal,
    with_p_yes,
)
from .confidence import wants_p_yes
from .expect import PartTokens
from .identity import effective_args, engine_identity
from .logprobs import LabelTokens, from_scores
from .presets import Preset
from .reach import cited_fields, count, placeholder_tokens, prompt_print
from .render import ChatRenderer, adapted, processor_inputs


def _load_model(preset: Preset, dtype, device_map: str | None):
    import transformers

    path = preset.require_path()
    kwargs = {"dtype": dtype, "trust_remote_code": preset.trust_remote_code}
    if device_map is not None:
        kwargs["device_map"] = device_map
    arch = preset.architecture
    if arch.startswith("Qwen3OmniMoe"):
        full = transformers.Qwen3OmniMoeForConditionalGeneration.from_pretrained(path, **kwargs)
        return full.thinker  # the talker only speaks; judging needs the thinker alone
    if arch.startswith("Qwen2_5Omni"):
        cls = transformers.Qwen2_5OmniThinkerForConditionalGeneration
        return cls.from_pretrained(path, **kwargs)
    if preset.modalities != {"text"}:
        # The config's own class where transformers has it: an audio-language model
        # (Qwen2-Audio) is no image-text-to-text model.
        named = getattr(transformers, arch, None) if not preset.trust_remote_code else None
        if named is not None and hasattr(named, "from_pretrained"):
            return named.from_pretrained(path, **kwargs)
        return transformers.AutoModelForImageTextToText.from_pretrained(path, **kwargs)
    return transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)


class _Kept:
    """A logits processor that changes nothing and keeps each step's scores as they reach it."""

    def __init__(self):
        self.rows: list = []

    def __call__(self, input_ids, scores):
        self.rows.append(scores.detach().clone())
        return scores


class TransformersEngine:
    """Judges with `transformers` generate + outlines-core constraints. Slow; always available.
    `dtype`: none for the placement's (the preset's on a GPU, float32 on the CPU)."""

    def __init__(
        self, preset: Preset, *, dtype: str | None = None, temperature: float = 0.0, seed: int = 0
    ):
        import torch

        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.stats = EngineStats()
        self.temperature = temperature
        self.seed = seed
        options = {"seed": seed} if dtype is None else {"dtype": dtype, "seed": seed}
        self._args = effective_args("transformers", preset, options)
        path = preset.require_path()
        self.renderer = ChatRenderer(path, preset, trust_remote_code=preset.trust_remote_code)
        self.placeholders = placeholder_tokens(path, self.renderer.tokenizer)
        self.part_tokens = PartTokens(preset, self.renderer, self.placeholders)
        dtype = self._args["dtype"]
        device_map = "auto" if self._args["device"] == "cuda" else None
        self.model = _load_model(
            preset, dtype if dtype == "auto" else getattr(torch, dtype), device_map
        ).eval()
        self._indexes: dict[str, object] = {}
        self._vocabulary = None

    @property
    def identity(self) -> str:
        return engine_identity("transformers", self.preset, self.temperature, self._args)

    @property
    def special_tokens(self) -> list[str]:
        return self.renderer.special_tokens

    def _logits_processor(self, regex: str):
        from outlines.backends.outlines_core import OutlinesCoreBackend, OutlinesCoreLogitsProcessor
        from outlines.models.transformers import TransformerTokenizer
        from outlines_core import Index

        if self._vocabulary is None:
            tok = TransformerTokenizer(self.renderer.tokenizer)
            self._vocabulary = OutlinesCoreBackend.create_outlines_core_vocabulary(
                tok.get_vocab(), tok.eos_token_id, tok.eos_token, tok.convert_token_to_string
            )
        if regex not in self._indexes:
            self._indexes[regex] = Index(regex, self._vocabulary)
        return OutlinesCoreLogitsProcessor(self._indexes[regex], "torch")

    def _inputs(self, request: Request):
        messages, media = build_messages(request, self.preset.quirks)
        return processor_inputs(self.renderer, messages, media)

    def _placed(self, value):
        """An input tensor on the model's (first) device; features in the model's dtype."""
        if not hasattr(value, "to") or self._args["device"] == "cpu":
            return value
        if value.is_floating_point():
            return value.to(self.model.device, self.model.dtype)
        return value.to(self.model.device)

    @functools.cached_property
    def label_ids(self) -> tuple[int, ...] | None:
        """The tokens that can decide a yes/no verdict (`LabelTokens.ids`), found once."""
        return LabelTokens(self.renderer.tokenizer).ids

    def _generate(
        self, request: Request, asked: Request | None = None, blocks: tuple[int, ...] = ()
    ) -> Result:
        """One request as sent (`request`), for the request as asked (`asked`: its parts are
        the citations; `blocks` how many parts sent each became)."""
        import torch
        from transformers import LogitsProcessorList

        asked = request if asked is None else asked
        expected = self.part_tokens.expected(request, blocks or None) if request.media else None
        inputs = self._inputs(request)
        inputs = {k: self._placed(v) for k, v in inputs.items() if v is not None}
        n_prompt = int(inputs["input_ids"].shape[-1])
        # The processor's ids, its placeholders expanded: what the model's forward pass reads.
        ids = inputs["input_ids"][0].tolist()
        reached = count(ids, self.placeholders)
        tok = self.renderer.tokenizer
        eos = [
            t for t in {tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")} if t is not None
        ]
        s = decoding(request, self.preset.quirks)
        temperature = self.temperature if s is None else s.temperature
        gen_kwargs = {
            "max_new_tokens": request.max_tokens() + self.preset.quirks.extra_output_tokens,
            "do_sample": temperature > 0,
            "eos_token_id": eos or None,
            "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else (eos or [0])[0],
        }
        regex = request.constraint()
        if regex is not None:
            gen_kwargs["logits_processor"] = LogitsProcessorList([self._logits_processor(regex)])
        if temperature > 0:
            gen_kwargs["temperature"] = temperature
            if s is not None:
                gen_kwargs["top_p"] = s.top_p
                if s.top_k:
                    gen_kwargs["top_k"] = s.top_k
            torch.manual_seed(self.seed if s is None else s.seed)
        thought: list[int] = []
        cut = False
        if self.preset.quirks.thinking and regex is not None:
            # The thought first, free, up to the budget; then the verdict under the grammar.
            inputs, thought, cut = self._think(inputs, gen_kwargs)
            gen_kwargs["max_new_tokens"] = request.max_tokens()
        start = int(inputs["input_ids"].shape[-1])
        kept = _Kept() if wants_p_yes(request.verdict) else None
        if kept is not None:
            # After the grammar's mask (the processors given here run after the model's own and
            # before the sampling warpers): what p_yes reads, whatever temperature and top-p.
            gen_kwargs["logits_processor"] = LogitsProcessorList(
                [*gen_kwargs.get("logits_processor", ()), kept]
            )
        with torch.inference_mode():
            out = self.model.generate(**inputs, **gen_kwargs)
        new = out[0, start:]
        raw = tok.decode([*thought, *new.tolist()], skip_special_tokens=True)
        steps = (
            from_scores(new.tolist(), kept.rows, lambda t: tok.decode([t]), self.label_ids)
            if kept is not None and kept.rows
            else None
        )
        n_out = len(thought) + int(new.shape[0])
        res = with_p_yes(request, finish(request, raw, n_prompt, n_out), steps)
        return dataclasses.replace(
            res,
            reached=reached,
            thought_cut=cut,
            **cited_fields(asked, expected, ids, self.placeholders),
            **prompt_print(ids, tok.bos_token_id),
        )

    def _think(self, inputs: dict, gen_kwargs: dict) -> tuple[dict, list[int], bool]:
        """A thinking model's thought, decoded without the grammar up to its budget (or its
        closing tag): (the inputs extended by it, its token ids, whether it was cut). A cut
        thought is closed (`thought.CLOSE`), so the verdict's grammar applies next."""
        import torch

        from .thought import CLOSE

        tok = self.renderer.tokenizer
        free = {k: v for k, v in gen_kwargs.items() if k != "logits_processor"}
        free.update(max_new_tokens=self.preset.quirks.extra_output_tokens)
        n = int(inputs["input_ids"].shape[-1])
        with torch.inference_mode():
            out = self.model.generate(**inputs, **free, stop_strings=["</think>"], tokenizer=tok)
        thought = out[0, n:].tolist()
        cut = "</think>" not in tok.decode(thought)
        if cut:
            thought += tok.encode(CLOSE, add_special_tokens=False)
        ids = torch.cat([inputs["input_ids"], torch.tensor([thought], dtype=torch.long)], dim=-1)
        grown = dict(inputs, input_ids=ids.to(inputs["input_ids"].device))
        if "attention_mask" in inputs:
            grown["attention_mask"] = torch.ones_like(grown["input_ids"])
        return grown, thought, cut

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        results = []
        with Timer(self.stats):
            for asked in requests:
                req, blocks = adapted(asked, self.preset)
                reason = refusal(req, self.name, self.modalities)
                if reason:
                    results.append(Result(error=reason))
                    continue
                try:
                    results.append(self._generate(req, asked, blocks))
                except Exception as e:  # one bad request must not sink the batch
                    results.append(Result(error=f"transformers generate failed: {e}"))
        record(self.stats, results)
        return results

    def close(self) -> None:
        self.model = None
