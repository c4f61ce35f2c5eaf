"""tiny-gemma3: `Gemma3ForConditionalGeneration`, text and image.

Recipe: head_dim 64 with `query_pre_attn_scalar` 64 (CPU attention rejects 16), SigLIP 224/14,
16 tokens per image. vLLM looks the literal strings "\n" .. "\n\n\n\n" up in the vocabulary, and
loads SigLIP weights from `vision_tower.vision_model.*` where transformers 5.x saves
`vision_tower.*`.
"""

from __future__ import annotations

from pathlib import Path

from .common import Checks, padded, rewrite_safetensors, save_weights_bf16
from .tokenizers import NEWLINE_TOKENS, sentencepiece_bpe

NAME = "gemma3"
DIR_NAME = "tiny-gemma3"
# 2: the multimodal projector is random (it was left at zeros: images never reached the model).
REVISION = 2

SPECIAL_TOKENS = [
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<mask>",
    "[multimodal]",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_image>",
    "<end_of_image>",
    "<image_soft_token>",
]
NAMED_TOKENS = {
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "image_token": "<image_soft_token>",
}

CHAT_TEMPLATE = r"""{#- Gemma-3 turns for the tiny checkpoint. A leading system message is
    folded into the first user turn; image parts become <start_of_image>, which the processor
    expands. -#}
{%- macro render_content(content) -%}
    {%- if content is not defined or content is none -%}
    {%- elif content is string -%}
        {{- content | trim -}}
    {%- else -%}
        {%- for part in content -%}
            {%- if part is string -%}
                {{- part | trim -}}
            {%- else -%}
                {%- set kind = part.get('type', '') -%}
                {%- if kind == 'text' -%}
                    {{- part.get('text', '') | trim -}}
                {%- elif kind in ['image', 'image_url', 'image_pil'] -%}
                    {{- '<start_of_image>' -}}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- if messages and messages[0]['role'] == 'system' -%}
    {%- set system_prefix = render_content(messages[0]['content']) + '\n\n' -%}
    {%- set turns = messages[1:] -%}
{%- else -%}
    {%- set system_prefix = '' -%}
    {%- set turns = messages -%}
{%- endif -%}
{%- for message in turns -%}
    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
    {{- '<start_of_turn>' + role + '\n' -}}
    {%- if loop.first -%}{{- system_prefix -}}{%- endif -%}
    {{- render_content(message['content']) -}}
    {{- '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<start_of_turn>model\n' -}}
{%- endif -%}
"""


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
        GenerationConfig,
    )

    tokenizer = sentencepiece_bpe(lines, CHAT_TEMPLATE, SPECIAL_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    vocab_size = padded(len(tokenizer))
    mm_tokens_per_image = 16

    text_config = {
        "vocab_size": vocab_size,
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "query_pre_attn_scalar": 64,
        "hidden_activation": "gelu_pytorch_tanh",
        "max_position_embeddings": 32768,
        "sliding_window": 512,
        "layer_types": ["sliding_attention", "full_attention"],
        "rms_norm_eps": 1e-6,
        "pad_token_id": tid("<pad>"),
        "eos_token_id": tid("<eos>"),
        "bos_token_id": tid("<bos>"),
        "tie_word_embeddings": True,
        "initializer_range": 0.02,
    }
    vision_config = {
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_channels": 3,
        "image_size": 224,
        "patch_size": 14,
        "hidden_act": "gelu_pytorch_tanh",
        "layer_norm_eps": 1e-6,
        "vision_use_head": False,
    }
    config = Gemma3Config(
        text_config=text_config,
        vision_config=vision_config,
        mm_tokens_per_image=mm_tokens_per_image,
        boi_token_index=tid("<start_of_image>"),
        eoi_token_index=tid("<end_of_image>"),
        image_token_index=tid("<image_soft_token>"),
        initializer_range=0.02,
        tie_word_embeddings=True,
    )
    config.architectures = ["Gemma3ForConditionalGeneration"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(config)
    # transformers initialises the projector from the vision tower to the language model at
    # zeros: every image would become the same soft tokens and never move the output (found by
    # `murgat smoke --reach`). Random, like every other weight here.
    with torch.no_grad():
        torch.nn.init.normal_(
            model.model.multi_modal_projector.mm_input_projection_weight, std=0.05
        )
    model.eval()
    model.generation_config = GenerationConfig(
        bos_token_id=tid("<bos>"),
        eos_token_id=[tid("<eos>"), tid("<end_of_turn>")],
        pad_token_id=tid("<pad>"),
        do_sample=False,
    )
    save_weights_bf16(model, directory)

    # vLLM's SigLIP loader wants the pre-5.x layout: vision_tower.vision_model.*
    def to_vllm_layout(key: str) -> str:
        for prefix in ("model.vision_tower.", "vision_tower."):
            if key.startswith(prefix) and not key.startswith(prefix + "vision_model."):
                return prefix + "vision_model." + key[len(prefix) :]
        return key

    rewrite_safetensors(directory, to_vllm_layout)

    image_processor = Gemma3ImageProcessor(
        size={"height": 224, "width": 224},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        do_pan_and_scan=False,
    )
    processor = Gemma3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=mm_tokens_per_image,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    checks.token("boi_token_index", config.boi_token_index, "<start_of_image>")
    checks.token("eoi_token_index", config.eoi_token_index, "<end_of_image>")
    checks.token("image_token_index", config.image_token_index, "<image_soft_token>")
    checks.token("text.bos_token_id", config.text_config.bos_token_id, "<bos>")
    checks.token("text.eos_token_id", config.text_config.eos_token_id, "<eos>")
    checks.token("text.pad_token_id", config.text_config.pad_token_id, "<pad>")
    for token in NEWLINE_TOKENS:
        checks.single_token(token)
    if processor.image_seq_length != config.mm_tokens_per_image:
        checks.add("processor.image_seq_length != mm_tokens_per_image")
    checks.common(config.text_config.vocab_size)
