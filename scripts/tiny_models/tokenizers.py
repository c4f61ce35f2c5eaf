"""Tokenizers trained here on the built-in corpus, in the two layouts the families use.

* `chatml_bpe`: byte-level BPE as transformers' `Qwen2Tokenizer` rebuilds it on load, control
  tokens appended after the learnt vocabulary (the Qwen families).
* `sentencepiece_bpe`: BPE with byte fallback as `GemmaTokenizer` rebuilds it, control tokens at
  the front of the vocabulary (the Gemma families).

A family passes its own control tokens; the learnt part depends only on the corpus and the size.
"""

from __future__ import annotations

import json

# vLLM's Gemma processors look these strings up in the vocabulary.
NEWLINE_TOKENS = ["\n", "\n\n", "\n\n\n", "\n\n\n\n"]


def _bpe_merges(tokenizer) -> list[tuple[str, str]]:
    model = json.loads(tokenizer.to_str())["model"]
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]


def chatml_bpe(
    lines: list[str],
    chat_template: str,
    added_tokens: list[tuple[str, bool]],
    named_tokens: dict[str, str],
    *,
    vocab_size: int = 3000,
    eos_token: str = "<|im_end|>",
    pad_token: str = "<|endoftext|>",
):
    """Byte-level BPE; `added_tokens` are (token, special) pairs given consecutive ids after the
    learnt vocabulary; `named_tokens` become tokenizer attributes (`image_token`, ...) that the
    processors read."""
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
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    trainer_tok.train_from_iterator(lines, trainer=trainer)
    vocab = dict(sorted(trainer_tok.get_vocab().items(), key=lambda kv: kv[1]))
    merges = _bpe_merges(trainer_tok)
    for token, _ in added_tokens:
        if token in vocab:
            raise RuntimeError(f"BPE learnt a control token by accident: {token!r}")
        vocab[token] = len(vocab)

    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        unk_token=None,
        bos_token=None,
        eos_token=eos_token,
        pad_token=pad_token,
        extra_special_tokens=dict(named_tokens),
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        errors="replace",
        split_special_tokens=False,
    )
    tokenizer.add_tokens(
        [AddedToken(tok, special=special, normalized=False) for tok, special in added_tokens]
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def sentencepiece_bpe(
    lines: list[str],
    chat_template: str,
    special_tokens: list[str],
    named_tokens: dict[str, str],
    *,
    vocab_size: int = 2600,
    plain_tokens: list[str] = (),
    tokenizer_kwargs: dict | None = None,
):
    """SentencePiece-style BPE with byte fallback. `special_tokens` take the first ids (the
    first five must be pad, eos, bos, unk, mask); then the 256 byte tokens, `NEWLINE_TOKENS`,
    `plain_tokens` (matched whole but not special, such as turn markers a family spells in
    text), and the learnt pieces."""
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
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        limit_alphabet=200,
        special_tokens=[],
    )
    trainer_tok.train_from_iterator(lines, trainer=trainer)
    trained_vocab = sorted(trainer_tok.get_vocab().items(), key=lambda kv: kv[1])
    trained_merges = _bpe_merges(trainer_tok)

    vocab: dict[str, int] = {}
    for token in special_tokens:
        vocab[token] = len(vocab)
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    for token in [*NEWLINE_TOKENS, *plain_tokens]:
        vocab[token] = len(vocab)
    for token, _ in trained_vocab:
        if token not in vocab:
            vocab[token] = len(vocab)
    newline_merges = [("\n", "\n"), ("\n\n", "\n"), ("\n\n", "\n\n")]
    merges = newline_merges + [m for m in trained_merges if m not in newline_merges]

    pad, eos, bos, unk, mask = special_tokens[:5]
    tokenizer = GemmaTokenizer(
        vocab=vocab,
        merges=merges,
        unk_token=unk,
        bos_token=bos,
        eos_token=eos,
        pad_token=pad,
        mask_token=mask,
        add_bos_token=True,
        add_eos_token=False,
        extra_special_tokens=dict(named_tokens),
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        spaces_between_special_tokens=False,
        **(tokenizer_kwargs or {}),
    )
    # Control tokens already sit in the vocabulary; registering them as added tokens makes
    # the tokenizer match them whole instead of spelling them out with BPE pieces.
    tokenizer.add_tokens(
        [AddedToken(tok, special=True, normalized=False) for tok in special_tokens]
    )
    if plain_tokens:
        tokenizer.add_tokens(
            [AddedToken(tok, special=False, normalized=False) for tok in plain_tokens]
        )
    tokenizer.chat_template = chat_template
    return tokenizer
