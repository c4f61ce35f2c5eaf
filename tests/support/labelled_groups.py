"""The human-labelled responses of support.human_labels with categories, and their groups and
scores worked out by hand."""

from __future__ import annotations

from murgat_local.metrics.groups import NO_VALUE
from support.human_labels import BY_HAND, _f1

# The human-labelled responses of test_human_labels (scores known by hand), with categories.
LABELLED = {
    "h01": {
        "answer": "A",
        "benchmark": "worldsense",
        "question_type": "multiple-choice",
        "categories": {"domain": "Sports", "audio_class": ["speech", "music"]},
    },
    "h02": {
        "answer": "B",
        "benchmark": "worldsense",
        "categories": {"domain": "Sports", "audio_class": ["music"]},
    },
    "h03": {"benchmark": "videommmu", "categories": {"audio_class": []}},
    "h04": {"categories": {"domain": "News"}},
}


SCORED_BY_HAND = {
    k: c * _f1(p, r) for k, (c, p, r) in BY_HAND.items()
}  # h04: no verifiable sentence


HAND_GROUPS = {
    "domain": {"News": ["h04"], "Sports": ["h01", "h02"], NO_VALUE: ["h03"]},
    "audio_class": {"music": ["h01", "h02"], "speech": ["h01"], NO_VALUE: ["h03", "h04"]},
    "benchmark": {"videommmu": ["h03"], "worldsense": ["h01", "h02"], NO_VALUE: ["h04"]},
}

R = 999  # bootstrap resamples
