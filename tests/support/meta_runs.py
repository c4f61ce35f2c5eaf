"""An oracle judge's run over five hand-written responses, and human labels built from its own
sentences and facts with hand-chosen verdicts (TRUTH): what the meta-eval tests measure."""

from __future__ import annotations

import copy
import json
import shutil

from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from support.fakes import OracleEngine

# The oracle judges colours by the frames and tones by loudness: second k of `colors` shows
# COLORS[k] (red, green, blue, yellow, ...). Facts are the sentence split at "and" / commas.
RESPONSES = [
    (
        "r1",
        "The screen is red (visual, 0:00). The screen is blue (visual, 0:02). So the answer is A.\nAnswer: A",
    ),
    (
        "r2",
        "The screen is green and bright (visual, 0:01; visual, 0:05). A tone plays (audio, 0:01). Hence B.\nAnswer: B",
    ),
    (
        "r3",
        "The screen is yellow (visual, 0:00). The screen is red (visual, 0:00). Thus C.\nAnswer: C",
    ),
    ("r4", "The screen is blue (visual, 0:02). The screen turns green. So D.\nAnswer: D"),
    ("r5", "The screen is red (visual, 0:00). So the answer is A.\nAnswer: A"),
]


def oracle_meta_run(tmp_path_factory, media_root):
    """The oracle judge's run over RESPONSES: (its folder, records by id)."""
    tmp = tmp_path_factory.mktemp("meta")
    rows = tmp / "r.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": i, "video": "colors", "model_generation": g}) + "\n"
            for i, g in RESPONSES
        )
    )
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        media_root,
        tmp / "judge",
        engines={"oracle": OracleEngine()},
        summary=RunSummary,
    )
    try:
        runner.run(rows)
    finally:
        runner.close()
    records = {
        r["id"]: r
        for r in map(json.loads, (tmp / "judge" / "scores.jsonl").read_text().splitlines())
    }
    return tmp, records


def labels_from(records: dict, truth: dict) -> list[dict]:
    """Labels with the judge's sentences and facts, but the truth's verdicts: truth[id] lists,
    per sentence, (verifiable, [(entailed, precise...) per fact] or None)."""
    out = []
    for rid, sents in truth.items():
        trace = records[rid]["trace"]["sentences"]
        line = {"id": rid, "annotator": "a1", "sentences": []}
        for s, (verifiable, facts) in zip(trace, sents):
            entry = {"text": s["text"], "verifiable": verifiable}
            if facts is not None:
                entry["facts"] = [
                    {"text": f["text"], "entailed": e, "precise": list(p)}
                    for f, (e, *p) in zip(s["facts"], facts)
                ]
            line["sentences"].append(entry)
        out.append(line)
    return out


TRUTH = {
    # the oracle: red@0 yes; blue@2 yes -> both facts entailed, precise
    "r1": [(True, [(True, True)]), (True, [(True, True)]), (False, None)],
    # people say the second citation of sentence 1 is not needed, and the tone is not heard
    "r2": [
        (True, [(True, True, False), (True, True, False)]),
        (True, [(False, False)]),
        (False, None),
    ],
    # people say the first sentence is wrong; the judge agrees (yellow is not at 0:00)
    "r3": [(True, [(False, False)]), (True, [(True, True)]), (True, None)],
    "r4": [(True, [(True, True)]), (True, None), (False, None)],
    "r5": [(True, [(True, True)]), (False, None)],
}


def write(path, lines):
    path.write_text("".join(json.dumps(l) + "\n" for l in lines))
    return path


def _confidence(value: bool, agrees: bool) -> float:
    """A judge sure where it agrees with people and unsure where it does not."""
    c = 0.96 if agrees else 0.62
    return c if value else 1 - c


def with_p_yes(records: dict, truth: dict, copies: int) -> tuple[dict, dict]:
    """The records, repeated `copies` times, with p_yes on every verifiable and joint verdict."""
    out, labels = {}, {}
    for k in range(copies):
        for rid, rec in records.items():
            new = copy.deepcopy(rec)
            new["id"] = f"{rid}-{k}"
            for s, (verifiable, facts) in zip(new["trace"]["sentences"], truth[rid]):
                v = s["verifiable"]
                v["p_yes"] = _confidence(v["value"], v["value"] == verifiable)
                for f, t in zip(s.get("facts") or [], facts or []):
                    f["joint"]["p_yes"] = _confidence(
                        f["joint"]["value"], f["joint"]["value"] == t[0]
                    )
                for f in s.get("facts") or []:  # the precision judgements: sure of everything
                    for v in [*f["alone"].values(), *f["without"].values()]:
                        v["p_yes"] = 0.9 if v["value"] else 0.1
            out[new["id"]] = new
            labels[new["id"]] = truth[rid]
    return out, labels


def run_folder(src, dst, records: dict):
    dst.mkdir()
    shutil.copy(src / "summary.json", dst / "summary.json")
    (dst / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records.values()))
    return dst
