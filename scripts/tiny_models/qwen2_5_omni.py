"""tiny-qwen2.5-omni: the Qwen2.5-Omni thinker (config `Qwen2_5OmniConfig`, architecture
`Qwen2_5OmniModel` as released, saved without talker / token2wav); text, image, video, audio.

Recipe: a dense Qwen2 text model (hidden 128, 2 heads of 64) with M-RoPE sections [8, 12, 12]
(summing to head_dim / 2), the Qwen2.5-VL window-attention vision tower at patch 14, and a
128-bin Whisper-style audio encoder that reads audio in 100-frame windows, so long tracks arrive
whole. The placeholders are the release's: <|vision_bos|><|IMAGE|><|vision_eos|>,
<|vision_bos|><|VIDEO|><|vision_eos|>, <|audio_bos|><|AUDIO|><|audio_eos|>. Every id in the config
is the tokenizer's; the role names are single tokens (the thinker finds user turns by id).
"""

from __future__ import annotations

from pathlib import Path

from .chatml import chatml_template
from .common import Checks, padded
from .corpus import ROLES
from .tokenizers import chatml_bpe

NAME = "qwen2.5-omni"
DIR_NAME = "tiny-qwen2.5-omni"

ADDED_TOKENS = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|AUDIO|>", True),
    ("<|audio_bos|>", True),
    ("<|audio_eos|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_bos|>", True),
    ("<|vision_eos|>", True),
    ("<|vision_pad|>", True),
    ("<|IMAGE|>", True),
    ("<|VIDEO|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
]
# Attributes the Qwen2.5-Omni processor reads from its tokenizer.
NAMED_TOKENS = {
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
    "audio_token": "<|AUDIO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
}
CHAT_TEMPLATE = chatml_template(
    "Qwen2.5-Omni",
    {
        "image": "<|vision_bos|><|IMAGE|><|vision_eos|>",
        "video": "<|vision_bos|><|VIDEO|><|vision_eos|>",
        "audio": "<|audio_bos|><|AUDIO|><|audio_eos|>",
    },
)


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        GenerationConfig,
        Qwen2_5OmniConfig,
        Qwen2_5OmniProcessor,
        Qwen2_5OmniThinkerForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        WhisperFeatureExtractor,
    )

    tokenizer = chatml_bpe(lines, CHAT_TEMPLATE, ADDED_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    for role in ROLES:
        if len(tokenizer.encode(role, add_special_tokens=False)) != 1:
            raise RuntimeError(f"role {role!r} is not a single token")
    user_id = tokenizer.encode("user", add_special_tokens=False)[0]
    im_end, eot = tid("<|im_end|>"), tid("<|endoftext|>")
    hidden = 128
    ids = {
        "audio_token_index": tid("<|AUDIO|>"),
        "image_token_index": tid("<|IMAGE|>"),
        "video_token_index": tid("<|VIDEO|>"),
        "audio_start_token_id": tid("<|audio_bos|>"),
        "audio_end_token_id": tid("<|audio_eos|>"),
        # the thinker's M-RoPE finds each image and clip by the token before it
        "vision_start_token_id": tid("<|vision_bos|>"),
        "vision_end_token_id": tid("<|vision_eos|>"),
    }
    text_config = {
        "vocab_size": padded(len(tokenizer)),
        "hidden_size": hidden,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 1000000.0,
            "mrope_section": [8, 12, 12],
        },
        "bos_token_id": eot,
        "eos_token_id": im_end,
        "pad_token_id": eot,
        "tie_word_embeddings": False,
        "initializer_range": 0.02,
    }
    vision_config = {
        "depth": 2,
        "hidden_size": hidden,
        "hidden_act": "silu",
        "intermediate_size": 256,
        "num_heads": 2,
        "in_channels": 3,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
        "out_hidden_size": hidden,
        "fullatt_block_indexes": [1],
        "initializer_range": 0.02,
    }
    audio_config = {
        "num_mel_bins": 128,
        "encoder_layers": 2,
        "encoder_attention_heads": 2,
        "encoder_ffn_dim": 256,
        "d_model": hidden,
        "output_dim": hidden,
        "max_source_positions": 1500,
        "n_window": 100,
        "initializer_range": 0.02,
    }
    thinker_config = {
        "text_config": text_config,
        "vision_config": vision_config,
        "audio_config": audio_config,
        "position_id_per_seconds": 25,
        "seconds_per_chunk": 2,
        "user_token_id": user_id,
        "initializer_range": 0.02,
        "tie_word_embeddings": False,
        **ids,
    }
    config = Qwen2_5OmniConfig(thinker_config=thinker_config, enable_audio_output=False)
    config.architectures = ["Qwen2_5OmniModel"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    thinker = Qwen2_5OmniThinkerForConditionalGeneration(config.thinker_config)
    thinker.eval()
    thinker.to(torch.bfloat16)
    # The release keeps the thinker's weights under thinker.*, beside the talker's.
    from safetensors.torch import save_file

    tensors = {f"thinker.{k}": v.contiguous() for k, v in thinker.state_dict().items()}
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    config.save_pretrained(directory)
    GenerationConfig(
        bos_token_id=eot, eos_token_id=[im_end, eot], pad_token_id=eot, do_sample=False
    ).save_pretrained(directory)

    image_processor = Qwen2VLImageProcessor(
        patch_size=14,
        temporal_patch_size=2,
        merge_size=2,
        size={"shortest_edge": 28 * 28, "longest_edge": 512 * 512},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )
    video_processor = Qwen2VLVideoProcessor(
        patch_size=14,
        temporal_patch_size=2,
        merge_size=2,
        size={"shortest_edge": 128 * 28 * 28, "longest_edge": 768 * 28 * 28},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        min_frames=2,
        max_frames=64,
    )
    feature_extractor = WhisperFeatureExtractor(
        feature_size=128,
        sampling_rate=16000,
        hop_length=160,
        chunk_length=300,
        n_fft=400,
        padding_value=0.0,
        return_attention_mask=True,
    )
    processor = Qwen2_5OmniProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        feature_extractor=feature_extractor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    thinker = config.thinker_config
    for label, token in [
        ("audio_token_index", "<|AUDIO|>"),
        ("image_token_index", "<|IMAGE|>"),
        ("video_token_index", "<|VIDEO|>"),
        ("audio_start_token_id", "<|audio_bos|>"),
        ("audio_end_token_id", "<|audio_eos|>"),
        ("vision_start_token_id", "<|vision_bos|>"),
    ]:
        checks.token(f"thinker.{label}", getattr(thinker, label), token)
    if checks.tok.encode("user", add_special_tokens=False) != [thinker.user_token_id]:
        checks.add("thinker.user_token_id is not the id of 'user'")
    for attr, token in NAMED_TOKENS.items():
        checks.attribute(processor, attr, token)
    rope = thinker.text_config.rope_parameters
    if (
        sum(rope["mrope_section"]) * 2
        != thinker.text_config.hidden_size // thinker.text_config.num_attention_heads
    ):
        checks.add("mrope_section does not sum to head_dim / 2")
    checks.common(thinker.text_config.vocab_size)
