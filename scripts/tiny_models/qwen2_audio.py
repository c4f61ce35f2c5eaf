"""tiny-qwen2-audio: `Qwen2AudioForConditionalGeneration`, text and audio, no vision.

Recipe: a Whisper-style encoder (128 mel bins, d_model 128, 2 layers) in front of a dense Qwen2
text model (hidden 128, 2 heads of 64). The Whisper feature extractor cuts audio into 30 s
windows and the encoder's position table holds one window (1500 positions), so a longer clip
reaches the model only as its first 30 s: the preset records that limit. The audio placeholder
is `<|audio_bos|><|AUDIO|><|audio_eos|>`, as in the released chat template.
"""

from __future__ import annotations

from pathlib import Path

from .chatml import chatml_template
from .common import Checks, padded, rewrite_safetensors, save_weights_bf16
from .tokenizers import chatml_bpe

NAME = "qwen2-audio"
DIR_NAME = "tiny-qwen2-audio"

ADDED_TOKENS = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|AUDIO|>", True),
    ("<|audio_bos|>", True),
    ("<|audio_eos|>", True),
]
NAMED_TOKENS = {
    "audio_token": "<|AUDIO|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
}
CHAT_TEMPLATE = chatml_template("Qwen2-Audio", {"audio": "<|audio_bos|><|AUDIO|><|audio_eos|>\n"})


def build(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        GenerationConfig,
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    tokenizer = chatml_bpe(lines, CHAT_TEMPLATE, ADDED_TOKENS, NAMED_TOKENS)
    tid = tokenizer.convert_tokens_to_ids
    im_end, eot = tid("<|im_end|>"), tid("<|endoftext|>")
    text_config = {
        "model_type": "qwen2",
        "vocab_size": padded(len(tokenizer)),
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "bos_token_id": eot,
        "eos_token_id": im_end,
        "pad_token_id": eot,
        "tie_word_embeddings": False,
        "initializer_range": 0.02,
    }
    audio_config = {
        "model_type": "qwen2_audio_encoder",
        "num_mel_bins": 128,
        "encoder_layers": 2,
        "encoder_attention_heads": 2,
        "encoder_ffn_dim": 256,
        "d_model": 128,
        "activation_function": "gelu",
        "max_source_positions": 1500,
        "scale_embedding": False,
        "initializer_range": 0.02,
    }
    config = Qwen2AudioConfig(
        audio_config=audio_config,
        text_config=text_config,
        audio_token_index=tid("<|AUDIO|>"),
    )
    config.architectures = ["Qwen2AudioForConditionalGeneration"]
    config.dtype = "bfloat16"

    torch.manual_seed(seed)
    model = Qwen2AudioForConditionalGeneration(config)
    model.eval()
    model.generation_config = GenerationConfig(
        bos_token_id=eot,
        eos_token_id=[im_end, eot],
        pad_token_id=eot,
        do_sample=False,
    )
    save_weights_bf16(model, directory)
    # transformers 5.x writes the text model one level too deep; the released checkpoint (and
    # vLLM's loader) have language_model.model.layers.*
    rewrite_safetensors(
        directory, lambda k: k.replace("language_model.model.model.", "language_model.model.", 1)
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
    processor = Qwen2AudioProcessor(
        feature_extractor=feature_extractor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)


def check(config, processor, checks: Checks) -> None:
    checks.token("audio_token_index", config.audio_token_index, "<|AUDIO|>")
    checks.token("text.eos_token_id", config.text_config.eos_token_id, "<|im_end|>")
    checks.attribute(processor, "audio_token_id", config.audio_token_index)
    for attr, token in NAMED_TOKENS.items():
        checks.attribute(processor, attr, token)
    if config.text_config.hidden_size // config.text_config.num_attention_heads != 64:
        checks.add("text head_dim is not 64 (CPU attention)")
    checks.common(config.text_config.vocab_size)
