"""What the `meta-eval --select` tests share: three human-label judges with known mistakes (any two
outvote the third everywhere) and one perfect copy, reading a run's records, running meta-eval."""

from __future__ import annotations

import copy
import json

from typer.testing import CliRunner

from murgat_local.cli import app
from support.human_labels import LABELS

SCORES = ("coverage", "precision", "recall", "f1", "murgat_s")

# Each judge gets one uncited sentence's verifiability and one fact's entailment wrong, never the
# same ones: any two of them outvote the third everywhere.
MISTAKES = {
    "j1": ("A tone plays.", "The screen is red."),
    "j2": ("Therefore A.", "The screen is bright."),
    "j3": ("So the answer is C.", "The screen is blue."),
}


def _with_mistakes(sentence_text: str, fact_text: str) -> list[dict]:
    rows = copy.deepcopy(LABELS)
    for line in rows:
        for s in line["sentences"]:
            if s["text"] == sentence_text:
                s["verifiable"] = not s["verifiable"]
            for f in s.get("facts", []):
                if f["text"] == fact_text:
                    f["entailed"] = not f["entailed"]
                    if f["entailed"]:
                        f["precise"] = [True] * s["text"].count("visual")
                    else:
                        f.pop("precise", None)
    return rows


def _records(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "scores.jsonl").read_text().splitlines())}


def _meta(tmp, truth, names, *extra):
    out = tmp / ("meta-" + "-".join(names))
    res = CliRunner().invoke(
        app,
        [
            "meta-eval",
            *[str(tmp / n) for n in names],
            "--human",
            str(truth),
            "--out",
            str(out),
            "--resamples",
            "200",
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads((out / "meta_eval.json").read_text()), res
