#!/usr/bin/env python
"""Build tiny random-weight multimodal checkpoints, fully offline and deterministically.

Two complete Hugging Face model directories are written under ``--out``:

* ``tiny-qwen3-omni``: the Qwen3-Omni *thinker* (``Qwen3OmniMoeForConditionalGeneration``,
  saved without talker / code2wav), text + image + video + audio.
* ``tiny-gemma3``: ``Gemma3ForConditionalGeneration``, text + image.

Each directory holds ``config.json``, ``generation_config.json``, safetensors weights, a
tokenizer trained here on a built-in English corpus, processor / preprocessor configs and a
Jinja chat template. Both load in ``vllm.LLM(model=dir)`` on the CPU and in transformers.
They are for exercising the engine path in tests: the weights are random, so the outputs
mean nothing.

Usage::

    .venv/bin/python scripts/build_tiny_models.py --out .local/models

Nothing is downloaded. The same seed gives byte-identical weights and tokenizers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Single-threaded tokenizer training and torch init keep the build reproducible and light.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_SEED = 20240917
QWEN_DIR_NAME = "tiny-qwen3-omni"
GEMMA_DIR_NAME = "tiny-gemma3"

# --------------------------------------------------------------------------------------------
# Built-in training corpus
# --------------------------------------------------------------------------------------------

_BASE_TEXT = """\
You are a careful judge. Read the question, look at the evidence, and answer YES or NO.
The user asks whether the video shows a red car turning left at the crossing.
The assistant answers with a short verdict and a reason that cites the evidence.
A system message sets the rules: be strict, be brief, and never guess.
Listen to the audio clip and tell me if a dog is barking in the background.
Look at the image. Is there a person wearing a blue jacket near the window?
The answer must be a single word: YES or NO. Do not explain unless asked.
Evaluate the response on accuracy, relevance, completeness and clarity, from 1 to 5.
The model cited second 12.5 of the clip, where the speaker says "good morning".
Return JSON such as {"verdict": "YES", "score": 4, "reason": "the car turns left"}.
Frames are sampled at two frames per second; audio is mono at sixteen kilohertz.
Question: Does the narrator mention the weather? Answer: NO.
Question: Is the ball in the air at 00:07? Answer: YES.
The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
It was a bright cold day in April, and the clocks were striking thirteen.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 16 24 30 60 100 128 256 512 1000 2024 16000.
Punctuation: commas, periods. Questions? Exclamations! Colons: semicolons; quotes "like this"
and 'like that', (parentheses), [brackets], {braces}, <angles>, slashes / \\ | dashes - _ +
Email the report to the team by Friday; include the table, the figure and the summary.
Is the claim supported by the transcript? The transcript says the meeting starts at noon.
"""

_SUBJECTS = [
    "the user",
    "the assistant",
    "the system",
    "the judge",
    "the model",
    "a speaker",
    "the narrator",
    "a woman",
    "a man",
    "the child",
    "the camera",
    "the video",
    "the image",
    "the audio",
    "the caption",
    "the answer",
    "the evidence",
    "the transcript",
    "the player",
    "the teacher",
    "a student",
    "the driver",
    "the dog",
    "a bird",
    "the crowd",
    "the reporter",
]
_VERBS = [
    "says",
    "shows",
    "asks",
    "answers",
    "describes",
    "mentions",
    "points at",
    "looks at",
    "listens to",
    "reads",
    "writes",
    "explains",
    "claims",
    "denies",
    "confirms",
    "repeats",
    "ignores",
    "compares",
    "counts",
    "names",
    "finds",
    "misses",
    "hears",
    "sees",
    "opens",
]
_OBJECTS = [
    "the red car",
    "a blue jacket",
    "the window",
    "a loud noise",
    "the second frame",
    "the first sentence",
    "a short clip",
    "the question",
    "the final score",
    "the weather",
    "a green light",
    "the crossing",
    "the kitchen table",
    "an open door",
    "the white board",
    "the correct answer",
    "a wrong number",
    "the main claim",
    "the last word",
    "the music",
    "a ringing phone",
    "the title",
    "a small box",
    "the river",
    "the mountain",
    "the street",
]
_TAILS = [
    "at the start",
    "near the end",
    "after ten seconds",
    "in the background",
    "very clearly",
    "without any doubt",
    "for a moment",
    "twice",
    "once again",
    "in the middle of the video",
    "before the music stops",
    "while the camera moves",
    "on the left side",
    "on the right side",
]
_COMMON_WORDS = """
time year people way day man woman child world life hand part place case week company system
program question work government number night point home water room mother area money story
fact month lot right study book eye job word business issue side kind head house service
friend father power hour game line end member law car city community name president team
minute idea kid body information back parent face others level office door health person art
war history party result change morning reason research girl guy moment air teacher force
education foot boy age policy process music market sense nation plan college interest death
experience effect use class control care field development role effort rate heart drug show
leader light voice wife police mind price report decision son view relationship town road arm
difference value building action model season society tax director position player record
paper space ground form event official matter center couple site project activity star table
need court oil situation cost industry figure street image phone data picture practice piece
land product doctor wall patient worker news test movie north love support technology step
baby computer type attention film tree source organization hair window evidence population
site camera sound speech clip frame second screen color shape speaker listener narrator video
audio transcript caption subtitle scene shot signal noise silence volume pitch tone language
accent sentence paragraph chapter title summary answer verdict score judge rubric criterion
accuracy relevance clarity completeness consistency honesty safety quality error mistake
claim statement argument premise conclusion support contradiction agreement comparison
be have do say go get make know think take see come want look use find give tell ask seem
feel try leave call keep let begin help talk turn start show hear play run move like live
believe hold bring happen write provide sit stand lose pay meet include continue set learn
lead understand watch follow stop create speak read allow add spend grow open walk win offer
remember consider appear buy wait serve die send expect build stay fall cut reach kill remain
suggest raise pass sell require decide return explain hope develop carry break receive agree
describe mention cite check verify count measure compare judge rate rank score label detect
good new first last long great little own other old big high different small large next
early young important few public bad same able late hard major better economic strong
possible whole free military true federal international full special easy clear recent
certain personal open red difficult available likely short single medical current wrong
private past foreign fine common poor natural significant similar hot dead central happy
serious ready simple left physical general environmental financial blue democratic dark
various entire close legal religious cold final main green nice huge popular traditional
cultural wide loud quiet bright slow fast careful correct incorrect partial relevant
about after again against all almost also always among another any around because before
behind below between both during each either enough even ever every except far from here
however inside instead into just later least less maybe more most much near never nothing
now often only onto outside over perhaps quite rather really since so something sometimes
soon still such than that then there these they this those though through today together
too toward under until upon usually very what when where whether which while who whose why
with within without yet you your we our us he she it his her its them their my me I
one two three four five six seven eight nine ten hundred thousand million half quarter
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
June July August September October November December spring summer autumn winter weather
rain snow wind sun cloud storm river mountain forest ocean island desert valley bridge
kitchen garden school hospital library station airport museum restaurant market street
dog cat bird horse fish cow sheep lion tiger bear mouse rabbit duck chicken insect
apple bread cheese coffee tea milk rice soup sugar salt egg meat fruit vegetable water
shirt jacket hat shoe dress coat glove bag box cup plate bottle chair desk bed lamp clock
"""
_SUFFIXES = ["", "", "", "s", "ed", "ing", "ly", "er", "ness", "ment"]
_VERDICTS = ["YES", "NO", "Yes", "No", "yes", "no", "true", "false", "unsure"]
_ROLES = ["system", "user", "assistant"]


def corpus_lines(seed: int, n_generated: int = 6000) -> list[str]:
    """Deterministic English text: a fixed paragraph set plus template sentences."""
    rng = random.Random(seed)
    lines = [line for line in _BASE_TEXT.splitlines() if line.strip()]
    words = _COMMON_WORDS.split()
    for i in range(n_generated):
        sentence = (
            f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} "
            f"{rng.choice(_OBJECTS)} {rng.choice(_TAILS)}."
        )
        kind = i % 6
        if kind == 0:
            sentence = f"{rng.choice(_ROLES)}: {sentence}"
        elif kind == 1:
            sentence += f" Verdict: {rng.choice(_VERDICTS)}."
        elif kind == 2:
            minute, second = rng.randint(0, 59), rng.randint(0, 59)
            sentence += f" Score {rng.randint(1, 5)} of 5 at {minute:02d}:{second:02d}."
        elif kind == 3:
            sentence = f'{{"verdict": "{rng.choice(_VERDICTS[:2])}", "reason": "{sentence}"}}'
        lines.append(sentence)
        # A free-form line drawn from the word list, with a few inflections.
        picked = [rng.choice(words) + rng.choice(_SUFFIXES) for _ in range(rng.randint(6, 14))]
        lines.append(" ".join(picked).capitalize() + rng.choice([".", "?", "!", ",", ";", ":"]))
    # Multi-line paragraphs, so runs of newlines get their own merges.
    for start in range(0, 600, 6):
        block = lines[start : start + 6]
        lines.append("\n".join(block[:3]) + "\n\n" + "\n".join(block[3:]) + "\n\n\n")
    # The role names must become single tokens (the Qwen config refers to them by id).
    lines.extend(" ".join(_ROLES) for _ in range(50))
    lines.extend("\n".join(_ROLES) for _ in range(50))
    return lines


# --------------------------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------------------------

QWEN_BPE_VOCAB = 3000
GEMMA_BPE_VOCAB = 2600

# Appended after the BPE vocabulary, in this order (the layout Qwen tokenizers use).
# (token, special): special tokens are dropped by skip_special_tokens when decoding.
QWEN_ADDED_TOKENS = [
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
QWEN_NAMED_TOKENS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "audio_token": "<|audio_pad|>",
    "vision_bos_token": "<|vision_start|>",
    "vision_eos_token": "<|vision_end|>",
    "audio_bos_token": "<|audio_start|>",
    "audio_eos_token": "<|audio_end|>",
}

# Gemma keeps its control tokens at the front of the vocabulary.
GEMMA_SPECIAL_TOKENS = [
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
GEMMA_NAMED_TOKENS = {
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "image_token": "<image_soft_token>",
}
# vLLM's Gemma-3 processor looks these strings up in the vocabulary.
GEMMA_NEWLINE_TOKENS = ["\n", "\n\n", "\n\n\n", "\n\n\n\n"]


def _bpe_merges(tokenizer) -> list[tuple[str, str]]:
    model = json.loads(tokenizer.to_str())["model"]
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]


def _padded(n: int, multiple: int = 64) -> int:
    return int(math.ceil(n / multiple) * multiple)


def build_qwen_tokenizer(lines: list[str], chat_template: str):
    """Byte-level BPE with exactly the pipeline transformers' Qwen2Tokenizer rebuilds on load."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    # Borrow normalizer / pre-tokenizer / decoder from an empty Qwen2Tokenizer so the merges
    # are learnt under the same splitting rules the loaded tokenizer will apply.
    reference = Qwen2Tokenizer(vocab={"<|endoftext|>": 0}, merges=[]).backend_tokenizer
    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.normalizer = reference.normalizer
    trainer_tok.pre_tokenizer = reference.pre_tokenizer
    trainer_tok.decoder = reference.decoder
    trainer = trainers.BpeTrainer(
        vocab_size=QWEN_BPE_VOCAB,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    trainer_tok.train_from_iterator(lines, trainer=trainer)
    vocab = dict(sorted(trainer_tok.get_vocab().items(), key=lambda kv: kv[1]))
    merges = _bpe_merges(trainer_tok)
    # Control tokens follow the BPE vocabulary with consecutive ids.
    for token, _ in QWEN_ADDED_TOKENS:
        if token in vocab:
            raise RuntimeError(f"BPE learnt a control token by accident: {token!r}")
        vocab[token] = len(vocab)

    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        unk_token=None,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=dict(QWEN_NAMED_TOKENS),
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        errors="replace",
        split_special_tokens=False,
    )
    tokenizer.add_tokens(
        [AddedToken(tok, special=special, normalized=False) for tok, special in QWEN_ADDED_TOKENS]
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def build_gemma_tokenizer(lines: list[str], chat_template: str):
    """SentencePiece-style BPE with byte fallback, as transformers' GemmaTokenizer rebuilds it."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import GemmaTokenizer

    # Gemma's own pipeline does not pre-tokenize at all (the whole string is one BPE word).
    # Train with "▁"-initial word splits so merges stay inside words, then load the merges
    # into the real pipeline.
    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.normalizer = normalizers.Replace(" ", "\u2581")
    trainer_tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split("\n", behavior="removed"),
            pre_tokenizers.Split("\u2581", behavior="merged_with_next"),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=GEMMA_BPE_VOCAB,
        min_frequency=2,
        show_progress=False,
        limit_alphabet=200,
        special_tokens=[],
    )
    trainer_tok.train_from_iterator(lines, trainer=trainer)
    trained_vocab = sorted(trainer_tok.get_vocab().items(), key=lambda kv: kv[1])
    trained_merges = _bpe_merges(trainer_tok)

    vocab: dict[str, int] = {}
    for token in GEMMA_SPECIAL_TOKENS:
        vocab[token] = len(vocab)
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    for token in GEMMA_NEWLINE_TOKENS:
        vocab[token] = len(vocab)
    for token, _ in trained_vocab:
        if token not in vocab:
            vocab[token] = len(vocab)
    newline_merges = [("\n", "\n"), ("\n\n", "\n"), ("\n\n", "\n\n")]
    merges = newline_merges + [m for m in trained_merges if m not in newline_merges]

    tokenizer = GemmaTokenizer(
        vocab=vocab,
        merges=merges,
        unk_token="<unk>",
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        mask_token="<mask>",
        add_bos_token=True,
        add_eos_token=False,
        extra_special_tokens=dict(GEMMA_NAMED_TOKENS),
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        spaces_between_special_tokens=False,
    )
    # Control tokens already sit in the vocabulary; registering them as added tokens makes
    # the tokenizer match them whole instead of spelling them out with BPE pieces.
    tokenizer.add_tokens(
        [AddedToken(tok, special=True, normalized=False) for tok in GEMMA_SPECIAL_TOKENS]
    )
    tokenizer.chat_template = chat_template
    return tokenizer


# --------------------------------------------------------------------------------------------
# Chat templates (our own; Jinja, rendered by transformers and by vLLM)
# --------------------------------------------------------------------------------------------

QWEN_CHAT_TEMPLATE = r"""{#- ChatML for the tiny Qwen3-Omni thinker. Media parts become the
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

GEMMA_CHAT_TEMPLATE = r"""{#- Gemma-3 turns for the tiny checkpoint. A leading system message is
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


# --------------------------------------------------------------------------------------------
# Model builders
# --------------------------------------------------------------------------------------------


def _save_weights_bf16(model, directory: Path) -> None:
    import torch

    model.to(torch.bfloat16)
    model.save_pretrained(directory, safe_serialization=True)


def _rewrite_safetensors(directory: Path, rename) -> None:
    """Rename tensor keys in every safetensors shard of ``directory`` (and its index)."""
    from safetensors.torch import load_file, save_file

    shards = sorted(directory.glob("*.safetensors"))
    for shard in shards:
        tensors = load_file(str(shard))
        renamed = {rename(k): v.contiguous() for k, v in tensors.items()}
        save_file(renamed, str(shard), metadata={"format": "pt"})
    index = directory / "model.safetensors.index.json"
    if index.exists():
        data = json.loads(index.read_text())
        data["weight_map"] = {rename(k): v for k, v in data["weight_map"].items()}
        index.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def build_qwen3_omni(directory: Path, lines: list[str], seed: int) -> None:
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

    tokenizer = build_qwen_tokenizer(lines, QWEN_CHAT_TEMPLATE)
    tid = tokenizer.convert_tokens_to_ids
    for role in _ROLES:
        pieces = tokenizer.encode(role, add_special_tokens=False)
        if len(pieces) != 1:
            raise RuntimeError(f"role {role!r} is not a single token: {pieces}")
    role_ids = {role: tokenizer.encode(role, add_special_tokens=False)[0] for role in _ROLES}
    vocab_size = _padded(len(tokenizer))

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
    _save_weights_bf16(model, directory)

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
        chat_template=QWEN_CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)


def build_gemma3(directory: Path, lines: list[str], seed: int) -> None:
    import torch
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
        GenerationConfig,
    )

    tokenizer = build_gemma_tokenizer(lines, GEMMA_CHAT_TEMPLATE)
    tid = tokenizer.convert_tokens_to_ids
    vocab_size = _padded(len(tokenizer))
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
    model.eval()
    model.generation_config = GenerationConfig(
        bos_token_id=tid("<bos>"),
        eos_token_id=[tid("<eos>"), tid("<end_of_turn>")],
        pad_token_id=tid("<pad>"),
        do_sample=False,
    )
    _save_weights_bf16(model, directory)

    # vLLM's SigLIP loader wants the pre-5.x layout: vision_tower.vision_model.*
    def to_vllm_layout(key: str) -> str:
        for prefix in ("model.vision_tower.", "vision_tower."):
            if key.startswith(prefix) and not key.startswith(prefix + "vision_model."):
                return prefix + "vision_model." + key[len(prefix) :]
        return key

    _rewrite_safetensors(directory, to_vllm_layout)

    image_processor = Gemma3ImageProcessor(
        size={"height": 224, "width": 224},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        do_pan_and_scan=False,
    )
    processor = Gemma3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=GEMMA_CHAT_TEMPLATE,
        image_seq_length=mm_tokens_per_image,
    )
    processor.save_pretrained(directory)


# --------------------------------------------------------------------------------------------
# Post-build consistency checks (cheap: config + tokenizer only)
# --------------------------------------------------------------------------------------------

_ROUND_TRIP_TEXT = 'Hello, user! naïve café — 日本語 🙂 ∑x²\n\n\tYES/NO {"verdict": 1}'


def verify_directory(directory: Path, kind: str) -> None:
    """Reload what was written and check the ids the engines rely on."""
    from transformers import AutoConfig, AutoProcessor

    config = AutoConfig.from_pretrained(directory)
    processor = AutoProcessor.from_pretrained(directory)
    tok = processor.tokenizer
    problems = []

    def expect(label: str, config_id: int, token: str) -> None:
        actual = tok.convert_tokens_to_ids(token)
        if config_id != actual:
            problems.append(f"{label}={config_id} but tokenizer has {token!r}={actual}")

    ids = tok.encode(_ROUND_TRIP_TEXT, add_special_tokens=False)
    if tok.decode(ids) != _ROUND_TRIP_TEXT:
        problems.append("tokenizer does not round-trip unicode text")

    if kind == "qwen":
        thinker = config.thinker_config
        text_vocab = thinker.text_config.vocab_size
        for label, token in [
            ("audio_token_id", "<|audio_pad|>"),
            ("image_token_id", "<|image_pad|>"),
            ("video_token_id", "<|video_pad|>"),
            ("audio_start_token_id", "<|audio_start|>"),
            ("audio_end_token_id", "<|audio_end|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>"),
        ]:
            expect(f"thinker.{label}", getattr(thinker, label), token)
        for label in (
            "audio_token_id",
            "image_token_id",
            "video_token_id",
            "vision_start_token_id",
            "audio_start_token_id",
        ):
            if getattr(config.talker_config, label) != getattr(thinker, label):
                problems.append(f"talker.{label} differs from thinker.{label}")
        expect("im_start_token_id", config.im_start_token_id, "<|im_start|>")
        expect("im_end_token_id", config.im_end_token_id, "<|im_end|>")
        expect("tts_pad_token_id", config.tts_pad_token_id, "<tts_pad>")
        for role in _ROLES:
            role_ids = tok.encode(role, add_special_tokens=False)
            if role_ids != [getattr(config, f"{role}_token_id")]:
                problems.append(f"{role}_token_id does not match {role_ids}")
        if thinker.user_token_id != config.user_token_id:
            problems.append("thinker.user_token_id differs")
        for attr, token in QWEN_NAMED_TOKENS.items():
            if getattr(processor, attr, token) != token:
                problems.append(f"processor.{attr} is not {token!r}")
    else:
        text_vocab = config.text_config.vocab_size
        expect("boi_token_index", config.boi_token_index, "<start_of_image>")
        expect("eoi_token_index", config.eoi_token_index, "<end_of_image>")
        expect("image_token_index", config.image_token_index, "<image_soft_token>")
        expect("text.bos_token_id", config.text_config.bos_token_id, "<bos>")
        expect("text.eos_token_id", config.text_config.eos_token_id, "<eos>")
        expect("text.pad_token_id", config.text_config.pad_token_id, "<pad>")
        vocab = tok.get_vocab()
        for token in GEMMA_NEWLINE_TOKENS:
            if token not in vocab or tok.encode(token, add_special_tokens=False) != [vocab[token]]:
                problems.append(f"{token!r} is not a single vocabulary token")
        if processor.image_seq_length != config.mm_tokens_per_image:
            problems.append("processor.image_seq_length != mm_tokens_per_image")
    if len(tok) > text_vocab:
        problems.append(f"tokenizer has {len(tok)} tokens, model vocab only {text_vocab}")
    if problems:
        raise RuntimeError(f"{directory}: " + "; ".join(problems))


# --------------------------------------------------------------------------------------------


def _normalise_permissions(directory: Path) -> None:
    """Some writers go through mkstemp (mode 0600); give every file the usual umask mode."""
    umask = os.umask(0)
    os.umask(umask)
    for path in directory.rglob("*"):
        if path.is_file():
            path.chmod(0o666 & ~umask)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(".local/models"), help="output folder")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    parser.add_argument(
        "--only",
        choices=["qwen3-omni", "gemma3"],
        action="append",
        help="build only this model (repeatable); default: both",
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if already built")
    args = parser.parse_args(argv)

    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)

    builders = {
        "qwen3-omni": (QWEN_DIR_NAME, build_qwen3_omni),
        "gemma3": (GEMMA_DIR_NAME, build_gemma3),
    }
    wanted = args.only or list(builders)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = corpus_lines(args.seed)
    for name in wanted:
        dir_name, build = builders[name]
        target = args.out / dir_name
        stamp = f"seed={args.seed}\n"
        if not args.force and (target / ".built").is_file() and (target / ".built").read_text() == stamp:
            print(f"{target}: already built", flush=True)
            continue
        started = time.perf_counter()
        # Build into a scratch folder beside the target, then swap it in.
        with tempfile.TemporaryDirectory(prefix=f".{dir_name}-", dir=args.out) as scratch:
            staging = Path(scratch) / dir_name
            staging.mkdir()
            build(staging, lines, args.seed)
            verify_directory(staging, "qwen" if name == "qwen3-omni" else "gemma")
            _normalise_permissions(staging)
            (staging / ".built").write_text(stamp)
            if target.exists():
                shutil.rmtree(target)
            shutil.move(str(staging), str(target))
        took = time.perf_counter() - started
        print(f"built {target} ({_dir_size(target) / 1e6:.1f} MB) in {took:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
