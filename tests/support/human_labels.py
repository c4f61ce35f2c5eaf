"""Responses, their human labels and the numbers worked out by hand, shared by the label, group,
panel and select tests."""

from __future__ import annotations

import json

# colors.mp4: second k shows red, green, blue, yellow, cyan, magenta, white, black.
RESPONSES = [
    {
        "id": "h01",
        "video": "colors",
        "model_generation": "Reasoning: The screen is red (visual, 0:00; visual, 0:01). The screen turns green (visual, 0:01). "
        "A tone plays. Therefore A.\nAnswer: A",
    },
    {
        "id": "h02",
        "video": "colors",
        "model_generation": "The screen is blue (visual, 0:02). So the answer is C.\nAnswer: C",
    },
    {
        "id": "h03",
        "video": "colors",
        "model_generation": "The screen shows a colour and it changes (visual, 0:03; visual, 0:04; visual, 0:05).\nAnswer: D",
    },
    {"id": "h04", "video": "colors", "model_generation": "Therefore the answer is B.\nAnswer: B"},
]


LABELS = [
    {
        "id": "h01",
        "annotator": "a1",
        "sentences": [
            # Two citations, the second not needed: precision 1/2, recall 1.
            {
                "text": "The screen is red (visual, 0:00; visual, 0:01).",
                "verifiable": True,
                "facts": [
                    {"text": "The screen is red.", "entailed": True, "precise": [True, False]}
                ],
            },
            # Two facts: one entailed (1, 1), one not (0, 0); `precise` may be left out when not entailed.
            {
                "text": "The screen turns green (visual, 0:01).",
                "verifiable": True,
                "facts": [
                    {"text": "The screen turns green.", "entailed": True, "precise": [True]},
                    {"text": "The screen is bright.", "entailed": False},
                ],
            },
            {"text": "A tone plays.", "verifiable": True},  # verifiable, uncited: coverage 2/3
            {"text": "Therefore A.", "verifiable": False},
        ],
    },
    {
        "id": "h02",
        "sentences": [
            {
                "text": "The screen is blue (visual, 0:02).",
                "verifiable": True,
                "facts": [{"text": "The screen is blue.", "entailed": True, "precise": [True]}],
            },
            {"text": "So the answer is C.", "verifiable": False},
        ],
    },
    {
        "id": "h03",
        "sentences": [
            # Three citations: any two suffice, none is needed (0, 1); the first two are needed (2/3, 1).
            {
                "text": "The screen shows a colour and it changes (visual, 0:03; visual, 0:04; visual, 0:05).",
                "verifiable": True,
                "facts": [
                    {
                        "text": "The screen shows a colour.",
                        "entailed": True,
                        "precise": [False, False, False],
                    },
                    {
                        "text": "The colour changes.",
                        "entailed": True,
                        "precise": [True, True, False],
                    },
                ],
            }
        ],
    },
    {"id": "h04", "sentences": [{"text": "Therefore the answer is B.", "verifiable": False}]},
]


def _f1(p, r):
    return 2 * p * r / (p + r) if p + r else 0.0


# By hand, from the labels: (coverage, precision, recall).
BY_HAND = {
    "h01": (2 / 3, (0.5 + 1 + 0) / 3, (1 + 1 + 0) / 3),
    "h02": (1.0, 1.0, 1.0),
    "h03": (1.0, (0 + 2 / 3) / 2, 1.0),
}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
