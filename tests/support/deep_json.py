"""A WorldSense file nested deeper than the reader takes."""

from __future__ import annotations

import json

DEEP = "[" * 100_000 + "]" * 100_000


TOO_DEEP = "nested too deeply (more than 100 levels)"


def _worldsense(folder, extra: str) -> None:
    folder.mkdir()
    task = {
        "question": "Which colour?",
        "candidates": ["A. red", "B. green"],
        "answer": "A",
        "task_domain": "Recognition",
        "task_type": "Counting",
    }
    good = json.dumps({"domain": "Sports", "task0": task})
    (folder / "worldsense_qa.json").write_text(
        f'{{"bad": {extra}, "ok": {good}}}', encoding="utf-8"
    )
