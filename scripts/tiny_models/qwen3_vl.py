"""tiny-qwen3-vl: `Qwen3VLForConditionalGeneration`, text, image and video, no audio.

Recipe: a dense Qwen3 text model (hidden 128, 2 layers, head_dim 64) with interleaved M-RoPE
whose sections sum to head_dim / 2, and the Qwen3-VL vision tower (patch 16, merge 2, temporal
patch 2, deepstack from layer 1) with a 16 x 16 learnt position grid. The processor stamps each
pair of video frames with its time (`<1.5 seconds>`), computed from the video's metadata, so
frames must arrive with their rate.
"""

from __future__ import annotations

from pathlib import Path

from .chatml import chatml_template
from .common import Checks, padded, save_weights_bf16
from .tokenizers import chatml_bpe

NAME = "qwen3-vl"
DIR_NAME = "tiny-qwen3-vl"

# Appended after the BPE vocabulary, in the order Qwen3-VL's tokenizer has them.
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
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
]
NAMED_TOKENS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "vision_start_token": "<|vision_start|>",
    "vision_end_token": "<|vision_end|>",
}
CHAT_TEMPLATE = chatml_template(
    "Qwen3-VL",
    {
        "image": "<|vision_start|><|image_pad|><|vision_end|>",
        "video": "<|vision_start|><|video_pad|><|vision_end|>",
    },
)


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        GenerationConfig,
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    tokenizer = chatml_bpe(lines, CHAT_TEMPLATE, ADDED_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    im_end, eot = tid("<|im_end|>"), tid("<|endoftext|>")
    hidden = 128
    text_config = {
        "vocab_size": padded(len(tokenizer)),
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
            "rope_theta": 5000000.0,
            "mrope_section": [12, 10, 10],  # sums to head_dim / 2
            "mrope_interleaved": True,
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
        "initializer_range": 0.02,
    }
    config = Qwen3VLConfig(
        text_config=text_config,
        vision_config=vision_config,
        image_token_id=tid("<|image_pad|>"),
        video_token_id=tid("<|video_pad|>"),
        vision_start_token_id=tid("<|vision_start|>"),
        vision_end_token_id=tid("<|vision_end|>"),
        tie_word_embeddings=False,
    )
    config.architectures = ["Qwen3VLForConditionalGeneration"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config)
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
    video_processor = Qwen3VLVideoProcessor(
        patch_size=16,
        temporal_patch_size=2,
        merge_size=2,
        size={"shortest_edge": 128 * 32 * 32, "longest_edge": 768 * 32 * 32},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        min_frames=2,
        max_frames=64,
        fps=2,
    )
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    checks.token("image_token_id", config.image_token_id, "<|image_pad|>")
    checks.token("video_token_id", config.video_token_id, "<|video_pad|>")
    checks.token("vision_start_token_id", config.vision_start_token_id, "<|vision_start|>")
    checks.token("vision_end_token_id", config.vision_end_token_id, "<|vision_end|>")
    checks.token("text.eos_token_id", config.text_config.eos_token_id, "<|im_end|>")
    for attr, token in NAMED_TOKENS.items():
        checks.attribute(processor, attr, token)
    if sum(config.text_config.rope_parameters["mrope_section"]) * 2 != config.text_config.head_dim:
        checks.add("mrope_section does not sum to head_dim / 2")
    checks.common(config.text_config.vocab_size)
