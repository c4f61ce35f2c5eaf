"""tiny-gemma4: `Gemma4ForConditionalGeneration` as in the E2B/E4B checkpoints, the Gemma 4 sizes
that carry an audio tower: text, image, video (timestamped frames) and audio.

Recipe: head_dim and global_head_dim 64 (full-attention layers default to 512, which CPU
attention has no kernel for), one sliding and one full layer, a small per-layer embedding (PLE)
table sized to the vocabulary, a SigLIP-like vision tower at patch 16 / pooling 3 with 70 soft
tokens per image (the smallest budget vLLM accepts), and the conformer audio tower at 128 mel
bins (its subsampling projection assumes 128 first-stage channels). Gemma 4 spells its turns
`<|turn>role ... <turn|>` and brackets media as `<|image> <|image|>* <image|>`; vLLM expands a
`<|video|>` placeholder into `mm:ss` timestamps, one bracketed frame each.
"""

from __future__ import annotations

from pathlib import Path

from .common import Checks, padded, save_weights_bf16
from .tokenizers import NEWLINE_TOKENS, sentencepiece_bpe

NAME = "gemma4"
DIR_NAME = "tiny-gemma4"

SPECIAL_TOKENS = [
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<mask>",
    "<|turn>",
    "<turn|>",
    "<|think|>",
    "<|channel>",
    "<channel|>",
    "<|image>",
    "<image|>",
    "<|image|>",
    "<|audio>",
    "<audio|>",
    "<|audio|>",
    "<|video|>",
]
# Attributes the Gemma 4 processor reads from its tokenizer.
NAMED_TOKENS = {
    "image_token": "<|image|>",
    "boi_token": "<|image>",
    "eoi_token": "<image|>",
    "audio_token": "<|audio|>",
    "boa_token": "<|audio>",
    "eoa_token": "<audio|>",
}
SOFT_TOKENS = 70  # per image and per video frame

CHAT_TEMPLATE = r"""{#- Gemma 4 turns for the tiny checkpoint: <|turn>role ... <turn|>, the assistant
    speaking as "model"; a system turn is native. Media parts become the placeholders the
    processor expands. Thinking stays off (no <|think|> in the system turn). -#}
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
                    {{- '<|image|>' -}}
                {%- elif kind in ['video', 'video_url'] -%}
                    {{- '<|video|>' -}}
                {%- elif kind in ['audio', 'audio_url', 'input_audio'] -%}
                    {{- '<|audio|>' -}}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- for message in messages -%}
    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
    {{- '<|turn>' + role + '\n' + render_content(message['content']) + '<turn|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|turn>model\n' -}}
{%- endif -%}
"""


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        Gemma4AudioFeatureExtractor,
        Gemma4Config,
        Gemma4ForConditionalGeneration,
        Gemma4ImageProcessor,
        Gemma4Processor,
        Gemma4VideoProcessor,
        GenerationConfig,
    )

    tokenizer = sentencepiece_bpe(lines, CHAT_TEMPLATE, SPECIAL_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    vocab_size = padded(len(tokenizer))

    text_config = {
        "vocab_size": vocab_size,
        "vocab_size_per_layer_input": vocab_size,
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "global_head_dim": 64,
        "hidden_size_per_layer_input": 16,
        "hidden_activation": "gelu_pytorch_tanh",
        "max_position_embeddings": 32768,
        "sliding_window": 512,
        "layer_types": ["sliding_attention", "full_attention"],
        "rms_norm_eps": 1e-6,
        "final_logit_softcapping": 30.0,
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
        "num_key_value_heads": 2,
        "head_dim": 64,
        "patch_size": 16,
        "pooling_kernel_size": 3,
        # Rows and columns of the learnt 2-D position table: enough patches per side for any
        # image at 70 soft tokens (70 * 3 * 3 patches in all).
        "position_embedding_size": 640,
        "default_output_length": SOFT_TOKENS,
        "rms_norm_eps": 1e-6,
        "initializer_range": 0.02,
    }
    audio_config = {
        "hidden_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "subsampling_conv_channels": [128, 32],
        "output_proj_dims": 128,
        "rms_norm_eps": 1e-6,
        "initializer_range": 0.02,
    }
    config = Gemma4Config(
        text_config=text_config,
        vision_config=vision_config,
        audio_config=audio_config,
        boi_token_id=tid("<|image>"),
        eoi_token_id=tid("<image|>"),
        image_token_id=tid("<|image|>"),
        video_token_id=tid("<|video|>"),
        boa_token_id=tid("<|audio>"),
        eoa_token_index=tid("<audio|>"),
        audio_token_id=tid("<|audio|>"),
        initializer_range=0.02,
        tie_word_embeddings=True,
    )
    config.eoa_token_id = tid("<audio|>")  # the name vLLM reads first
    config.architectures = ["Gemma4ForConditionalGeneration"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    model = Gemma4ForConditionalGeneration(config)
    model.eval()
    model.generation_config = GenerationConfig(
        bos_token_id=tid("<bos>"),
        eos_token_id=[tid("<eos>"), tid("<turn|>")],
        pad_token_id=tid("<pad>"),
        do_sample=False,
    )
    save_weights_bf16(model, directory)

    image_processor = Gemma4ImageProcessor(
        patch_size=16, max_soft_tokens=SOFT_TOKENS, pooling_kernel_size=3
    )
    video_processor = Gemma4VideoProcessor(
        patch_size=16, max_soft_tokens=SOFT_TOKENS, pooling_kernel_size=3, num_frames=32
    )
    feature_extractor = Gemma4AudioFeatureExtractor(feature_size=128, sampling_rate=16000)
    processor = Gemma4Processor(
        feature_extractor=feature_extractor,
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=SOFT_TOKENS,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    checks.token("boi_token_id", config.boi_token_id, "<|image>")
    checks.token("eoi_token_id", config.eoi_token_id, "<image|>")
    checks.token("image_token_id", config.image_token_id, "<|image|>")
    checks.token("video_token_id", config.video_token_id, "<|video|>")
    checks.token("boa_token_id", config.boa_token_id, "<|audio>")
    checks.token("eoa_token_index", config.eoa_token_index, "<audio|>")
    checks.token("audio_token_id", config.audio_token_id, "<|audio|>")
    checks.token("text.bos_token_id", config.text_config.bos_token_id, "<bos>")
    checks.token("text.eos_token_id", config.text_config.eos_token_id, "<eos>")
    checks.token("text.pad_token_id", config.text_config.pad_token_id, "<pad>")
    for token in NEWLINE_TOKENS:
        checks.single_token(token)
    # The processor registers <|video|> itself; it must find the id the config names.
    checks.attribute(processor, "video_token_id", config.video_token_id)
    checks.attribute(processor, "image_token_id", config.image_token_id)
    checks.attribute(processor, "audio_token_id", config.audio_token_id)
    checks.common(config.text_config.vocab_size)
