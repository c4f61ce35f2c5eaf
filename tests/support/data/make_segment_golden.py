"""Regenerate segment_golden.json: what `segment_response` (both modes) and the two splitters
return on a varied corpus. It was generated from the code before the text steps were made
linear (commit fcf3d19), and tests/unit/test_hostile_text.py asserts the current code returns the
same; only regenerate it on purpose, when an output is meant to change. It was regenerated once
so, when `segment_response` became what the scorer judges (issue 17): in reference mode a
sentence repeated word for word is listed once, and a sentence that is only citations is its
own claim; every other output was checked to be the same as before. And once more when default
mode began to list `unparsed_citations` on a sentence (issue 46): with that key left out, every
output was the same as before.

Usage: python tests/support/data/make_segment_golden.py > tests/support/data/segment_golden.json
"""

from __future__ import annotations

import hashlib
import json
import random

from murgat_local.text.segment import segment_response
from murgat_local.text.sentences import split_sentences, split_sentences_reference

# The existing tests' inputs and hand-picked edge cases: outputs kept in full.
CURATED = [
    "The man points (visual, 0:12). He sits down. (visual, 0:15) Then he waves.",
    'Dr. Smith says "Stop. Now!" loudly (audio, 0:20). It costs 3.5 dollars, e.g. cheap. He waits... and waves.',
    'Dr. Smith says "Stop." It costs 3.5 dollars.',
    "他走了。她笑了（visual, 0:03）。\n- A red car appears (visual, 0:01).\n2. It stops.\nAnswer: B",
    "A dog barks (audio, 0:01).(visual, 0:02) A cat.",
    "<think>scratch (visual, 0:01)</think>\n**Reasoning:** The man waves (visual, 0:02). So B.\n**Answer:** (B) the man",
    "A cat sits (visual, 0:01). Answer: C",
    "Reasoning: x.\nAnswer: A \\boxed{D}",
    "Reasoning: The man waves (visual, 0:02).",
    "Reasoning: Dr. Lee waves (visual, 0:12.5). So B.\nAnswer: B",
    "X (Visual, 0:02-0:04; audio, 99:99; visual, 0:12.5; visual, 1:02:03).",
    "Y (audio, 0:10 - 0:12). He leaves (at 0:12) and returns (see above).",
    "He waves (visual, 0:12) and smiles (happily). A bell (AUDIO, 1:20 – 1:30). Sq [visual, 0:07].",
    "Bad (visual, 99:99). Rev (audio, 0:30-0:10). Min (visual, 1:75:00). Odd (smell, 0:10). Loose (visual, 1:2:3:4).",
    "J. Smith met A. B. Jones at 7 a.m. in the U.S. on Jan. 5. Then he left.",
    "A. first item\nB. second item (visual, 0:01).\n",
    "He said “Go. Now.” and went (visual, 0:01). «Oui. Non.» (audio, 0:02) 「はい。」 (visual, 0:03)",
    'Unbalanced “quote. Next sentence (visual, 0:04). And "another. One more.',
    "Open paren (visual, 0:05. Still open. [also open. Done (audio, 0:06).",
    "Ellipsis… then more. Dots.... and more!!! Really?! Yes.",
    "<think>a</think><think>b</think> tail <think>unclosed",
    "</think> only closing. Body here (visual, 0:01).",
    "Prefix *Reasoning* body (visual, 0:01).\nFinal Answer: **C**",
    "No markers at all",
    "",
    "   \n\t\n ",
    "A \ud83d b (visual, 0:01).",
    "NUL\x00inside (visual, 0:01). Bidi \u202eevil\u202c text. Zero\u200bwidth.",
    "Line\rcarriage (visual, 0:01).\u2028Sep (audio, 0:02).\x0bVT.",
    "3.5. 4.25. Version 1.2.3 (visual, 0:01). e.g. lower. E.g. Upper.",
    "(visual, 0:01) leading citation. (audio, 0:02)(visual, 0:03). trailing",
    "Multiple; semis (visual, 0:01; ; audio, 0:02;).",
    "Hours (visual, 1:02:03 - 1:02:05). Tilde (visual, 0:01 ~ 0:02). To (visual, 0:01 to 0:03).",
    "A cat (visual, 0:01).\nAnswer: the answer is D",
    "A cat (visual, 0:01). \\boxed{\\text{B}} and \\boxed{ \\boxed{C}",
    "A cat (visual, 0:01).\nANSWER - C",
    "A cat (visual, 0:01).\n**Answer:**\n\n**B**",
    "A cat.\nCorrect answer: Option c) a dog\nFinal Answer： (a)",
    "Answer: A man waves. Answer: I think B",
    "<think>Answer: A</think> reanswer: B. answer - aside. Answer-based: C",
]

FRAGMENTS = [
    "The man",
    " points",
    "she",
    " it",
    "x",
    "A",
    "b",
    "Z",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    ".",
    "!",
    "?",
    "...",
    "…",
    "..",
    ".!",
    ";",
    ",",
    ":",
    "*",
    "_",
    "#",
    "**",
    "- ",
    "1. ",
    "a) ",
    "• ",
    "Dr.",
    " e.g.",
    " i.e.",
    "U.S.",
    " J.",
    "vs.",
    "approx.",
    "Mt.",
    " 3.5",
    "3",
    ".5",
    "12.75",
    '"',
    "“",
    "”",
    "'",
    "’",
    "«",
    "»",
    "「",
    "」",
    "(visual, 0:12)",
    "(audio, 1:20-1:30)",
    "(AUDIO, 1:20 - 1:30)",
    "(visual, 0:12.5-0:14.25)",
    "[visual, 0:07]",
    "（visual, 0:03）",
    "(visual, 0:02; audio, 0:16-0:19)",
    "(visual, 99:99)",
    "(smell, 0:10)",
    "(at 0:12)",
    "(see above)",
    "(visual, 1:2:3:4)",
    "(video: 0:01)",
    "(",
    ")",
    "[",
    "]",
    "（",
    "）",
    "。",
    "！",
    "？",
    "他走了",
    "她笑了",
    "Reasoning:",
    "**Reasoning:**",
    "Answer: B",
    "\nAnswer: C",
    "**Answer:** (B)",
    "Final answer: D",
    "\\boxed{A}",
    "\\boxed{",
    "}",
    "<think>",
    "</think>",
    "<THINK>",
    "\u200f",
    "\u202e",
    "\x00",
    "\ud83d",
    "\u2028",
    "\x0b",
    "é",
    "İ",
    "K",
    "ANSWER - ",
    "Correct answer: ",
    "Option C",
    "the answer is ",
    "\\text{",
    "{",
    "$",
]


def random_corpus(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def long_corpus() -> list[str]:
    """Long responses as scripts/bench_text.py builds them (one paragraph; lines)."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "scripts"))
    from bench_text import make_response

    return [make_response(300, seed=1), make_response(300, seed=2, lines_every=5)]


def _kept(record: dict) -> dict:
    """The keys the golden file holds (later keys say where the text came from)."""
    return {k: record[k] for k in ("mode", "answer", "answer_text", "sentences")}


def outputs(text: str) -> dict:
    return {
        "default": _kept(segment_response(text)),
        # The reference's --parse_reasoning invocation: its text steps are the cleaner's; its
        # default invocation splits the generation as written, which `split_reference` covers.
        "reference": _kept(segment_response(text, "reference", parse_reasoning=True)),
        "split": split_sentences(text),
        "split_reference": split_sentences_reference(text),
    }


def digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def main() -> None:
    golden = {
        "full": [{"text": t, **outputs(t)} for t in CURATED],
        "digests": [
            {"text": t, "sha256": digest(outputs(t))} for t in random_corpus(450) + long_corpus()
        ],
    }
    print(json.dumps(golden, sort_keys=True, ensure_ascii=True))


if __name__ == "__main__":
    main()
