"""tiny-qwen3-omni: the Qwen3-Omni thinker (`Qwen3OmniMoeForConditionalGeneration`, saved without
talker / code2wav); text, image, video and audio.

Recipe: MoE text model (hidden 128, 2 layers, head_dim 64, 4 experts top-2), `mrope_section`
summing to head_dim / 2, vision patch 16 with `image_size` 256 (vLLM reads it), a 128-bin Whisper
audio encoder. Every special-token id in the config is the tokenizer's; the role names are single
tokens because the config refers to them by id.
"""

from __future__ import annotations

from pathlib import Path

from .common import Checks, padded, save_weights_bf16
from .corpus import ROLES
from .tokenizers import chatml_bpe

NAME = "qwen3-omni"
DIR_NAME = "tiny-qwen3-omni"

# Appended after the BPE vocabulary, in this order (the layout Qwen tokenizers use).
# (token, special): special tokens are dropped by skip_special_tokens when decoding.
ADDED_TOKENS = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
    ("<|audio_start|>", True),
    ("<|audio_end|>", True),
    ("<tts_pad>", True),
    ("<tts_text_bos>", True),
    ("<tts_text_eod>", True),
    ("<tts_text_bos_single>", True),
    ("<|audio_pad|>", True),
]

# Attributes the Qwen3-Omni processor reads from its tokenizer.
NAMED_TOKENS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "audio_token": "<|audio_pad|>",
    "vision_bos_token": "<|vision_start|>",
    "vision_eos_token": "<|vision_end|>",
    "audio_bos_token": "<|audio_start|>",
    "audio_eos_token": "<|audio_end|>",
}

CHAT_TEMPLATE = r"""{#- ChatML for the tiny Qwen3-Omni thinker. Media parts become the
    placeholders that the processor expands: image -> vision_start image_pad vision_end,
    video -> vision_start video_pad vision_end, audio -> audio_start audio_pad audio_end. -#}
{%- macro render_content(content) -%}
    {%- if content is not defined or content is none -%}
    {%- elif content is string -%}
        {{- content -}}
    {%- else -%}
        {%- for part in content -%}
            {%- if part is string -%}
                {{- part -}}
            {%- else -%}
                {%- set kind = part.get('type', '') -%}
                {%- if kind == 'text' -%}
                    {{- part.get('text', '') -}}
                {%- elif kind in ['image', 'image_url', 'image_pil'] -%}
                    {{- '<|vision_start|><|image_pad|><|vision_end|>' -}}
                {%- elif kind in ['video', 'video_url'] -%}
                    {{- '<|vision_start|><|video_pad|><|vision_end|>' -}}
                {%- elif kind in ['audio', 'audio_url', 'input_audio'] -%}
                    {{- '<|audio_start|><|audio_pad|><|audio_end|>' -}}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{%- for message in messages -%}
    {{- '<|im_start|>' + message['role'] + '\n' -}}
    {{- render_content(message['content']) -}}
    {{- '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
"""


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        GenerationConfig,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        Qwen3OmniMoeConfig,
        Qwen3OmniMoeForConditionalGeneration,
        Qwen3OmniMoeProcessor,
        WhisperFeatureExtractor,
    )

    tokenizer = chatml_bpe(lines, CHAT_TEMPLATE, ADDED_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    for role in ROLES:
        pieces = tokenizer.encode(role, add_special_tokens=False)
        if len(pieces) != 1:
            raise RuntimeError(f"role {role!r} is not a single token: {pieces}")
    role_ids = {role: tokenizer.encode(role, add_special_tokens=False)[0] for role in ROLES}
    vocab_size = padded(len(tokenizer))

    ids = {
        "audio_token_id": tid("<|audio_pad|>"),
        "image_token_id": tid("<|image_pad|>"),
        "video_token_id": tid("<|video_pad|>"),
        "audio_start_token_id": tid("<|audio_start|>"),
        "audio_end_token_id": tid("<|audio_end|>"),
        "vision_start_token_id": tid("<|vision_start|>"),
        "vision_end_token_id": tid("<|vision_end|>"),
    }
    im_start, im_end, eot = tid("<|im_start|>"), tid("<|im_end|>"), tid("<|endoftext|>")

    hidden = 128
    text_config = {
        "vocab_size": vocab_size,
        "hidden_size": hidden,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 1000000.0,
            "mrope_section": [12, 10, 10],  # sums to head_dim / 2
            "interleaved": True,
            "mrope_interleaved": True,
        },
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "moe_intermediate_size": 64,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "norm_topk_prob": True,
        "tie_word_embeddings": False,
        "bos_token_id": eot,
        "eos_token_id": im_end,
        "pad_token_id": eot,
        "initializer_range": 0.02,
    }
    vision_config = {
        "depth": 2,
        "hidden_size": hidden,
        "hidden_act": "gelu_pytorch_tanh",
        "intermediate_size": 256,
        "num_heads": 2,
        "in_channels": 3,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "out_hidden_size": hidden,
        "num_position_embeddings": 256,
        "deepstack_visual_indexes": [1],
        "image_size": 256,  # read by vLLM: (256 / 16) ** 2 == num_position_embeddings
        "apply_vit_abs_pos_embed": True,
        "initializer_range": 0.02,
    }
    audio_config = {
        "num_mel_bins": 128,
        "encoder_layers": 2,
        "encoder_attention_heads": 2,
        "encoder_ffn_dim": 256,
        "d_model": hidden,
        "output_dim": hidden,
        "downsample_hidden_size": 32,
        "activation_function": "gelu",
        "max_source_positions": 1500,
        "n_window": 50,
        "n_window_infer": 800,
        "conv_chunksize": 500,
        "scale_embedding": False,
        "initializer_range": 0.02,
    }
    thinker_config = {
        "text_config": text_config,
        "vision_config": vision_config,
        "audio_config": audio_config,
        "position_id_per_seconds": 13,
        "seconds_per_chunk": 2,
        "user_token_id": role_ids["user"],
        "initializer_range": 0.02,
        "tie_word_embeddings": False,
        **ids,
    }
    talker_config = {
        "thinker_hidden_size": hidden,
        "audio_token_id": ids["audio_token_id"],
        "image_token_id": ids["image_token_id"],
        "video_token_id": ids["video_token_id"],
        "vision_start_token_id": ids["vision_start_token_id"],
        "audio_start_token_id": ids["audio_start_token_id"],
    }
    config = Qwen3OmniMoeConfig(
        thinker_config=thinker_config,
        talker_config=talker_config,
        enable_audio_output=False,
        im_start_token_id=im_start,
        im_end_token_id=im_end,
        tts_pad_token_id=tid("<tts_pad>"),
        tts_bos_token_id=tid("<tts_text_bos>"),
        tts_eos_token_id=tid("<tts_text_eod>"),
        system_token_id=role_ids["system"],
        user_token_id=role_ids["user"],
        assistant_token_id=role_ids["assistant"],
        initializer_range=0.02,
    )
    config.architectures = ["Qwen3OmniMoeForConditionalGeneration"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    model = Qwen3OmniMoeForConditionalGeneration(config)
    model.eval()
    model.generation_config = GenerationConfig(
        bos_token_id=eot,
        eos_token_id=[im_end, eot],
        pad_token_id=eot,
        do_sample=False,
    )
    save_weights_bf16(model, directory)

    image_processor = Qwen2VLImageProcessor(
        patch_size=16,
        temporal_patch_size=2,
        merge_size=2,
        size={"shortest_edge": 32 * 32, "longest_edge": 512 * 512},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )
    video_processor = Qwen2VLVideoProcessor(
        patch_size=16,
        temporal_patch_size=2,
        merge_size=2,
        # Same bounds the Qwen3-Omni processor passes at call time.
        size={"shortest_edge": 128 * 32 * 32, "longest_edge": 768 * 32 * 32},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        min_frames=2,
        max_frames=64,
    )
    feature_extractor = WhisperFeatureExtractor(
        feature_size=128,
        sampling_rate=16000,
        hop_length=160,
        chunk_length=30,
        n_fft=400,
        padding_value=0.0,
        return_attention_mask=True,
    )
    processor = Qwen3OmniMoeProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        feature_extractor=feature_extractor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    """The ids vLLM and transformers look up, as the tokenizer has them."""
    thinker = config.thinker_config
    for label, token in [
        ("audio_token_id", "<|audio_pad|>"),
        ("image_token_id", "<|image_pad|>"),
        ("video_token_id", "<|video_pad|>"),
        ("audio_start_token_id", "<|audio_start|>"),
        ("audio_end_token_id", "<|audio_end|>"),
        ("vision_start_token_id", "<|vision_start|>"),
        ("vision_end_token_id", "<|vision_end|>"),
    ]:
        checks.token(f"thinker.{label}", getattr(thinker, label), token)
    for label in (
        "audio_token_id",
        "image_token_id",
        "video_token_id",
        "vision_start_token_id",
        "audio_start_token_id",
    ):
        if getattr(config.talker_config, label) != getattr(thinker, label):
            checks.add(f"talker.{label} differs from thinker.{label}")
    checks.token("im_start_token_id", config.im_start_token_id, "<|im_start|>")
    checks.token("im_end_token_id", config.im_end_token_id, "<|im_end|>")
    checks.token("tts_pad_token_id", config.tts_pad_token_id, "<tts_pad>")
    for role in ROLES:
        role_ids = checks.tok.encode(role, add_special_tokens=False)
        if role_ids != [getattr(config, f"{role}_token_id")]:
            checks.add(f"{role}_token_id does not match {role_ids}")
    if thinker.user_token_id != config.user_token_id:
        checks.add("thinker.user_token_id differs")
    for attr, token in NAMED_TOKENS.items():
        if getattr(processor, attr, token) != token:
            checks.add(f"processor.{attr} is not {token!r}")
    checks.common(thinker.text_config.vocab_size)
