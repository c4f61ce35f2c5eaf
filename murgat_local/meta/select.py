"""Judge selection: for each stage, the judge (a run's judge, or a panel of them) that agrees
best with people on its subtask, and the configuration that runs the chosen combination.

  verifiable  subtask 1 balanced accuracy
  decompose   subtask 2 decomposition F1 (fact lists are not voted on: runs' decomposers only)
  entail      subtask 3 balanced accuracy

Ties are broken by the MURGAT-S Pearson correlation of the candidate's own combination (its
stage's verdicts, the other stages from the run of its first member), then by fewer members,
then by the order of the vote rules (majority first). Panels are built from the runs' judges
and scored from their recorded verdicts (`combine`): no model is called. The weights of a
weighted candidate panel are its members' reliability weights (`judges.panel.reliability_weight`)
from their balanced accuracy on the same labels: the selection is fitted to these labels, as
every choice made here is.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..judges.panel import VOTES, Rule, is_panel, reliability_weight
from ..results import ScoreRecord
from ..stages import YES_NO, Stage
from .agreement import evaluate
from .combine import Judge, combine_all, panel, single
from .views import ResponseView, from_record, sentences

STAT = {
    Stage.VERIFIABLE: ("subtask1", "balanced_accuracy"),
    Stage.DECOMPOSE: ("subtask2", "f1"),
    Stage.ENTAIL: ("subtask3", "balanced_accuracy"),
}
# Panels are built from at most this many judges per stage (the best by the subtask): 57 subsets.
POOL = 6
# What best.toml takes from the decomposer's run besides the judges: the settings that change a
# verdict (`config.RunConfig`), as they were measured. A key maps to None, or to the sub-keys of
# its table that do. A run folder may come from anyone: where media may be read from
# (allow_outside), which server and API key the media go to, where engines, weights and caches
# are, and how much work a run may do are not copied; they come from the user's own
# configuration and flags when `murgat score --config best.toml` runs.
VERDICT_KEYS: dict[str, tuple[str, ...] | None] = {
    "compat": None,
    "decontextualize": None,
    "parse_reasoning": None,
    "sampling": ("temperature", "seed"),
    # Not the memory bounds (max_open_videos, max_*_mb) nor audio_seek_after: they change how
    # media is held and decoded, never what a judge is shown.
    "media": ("fps", "max_frames", "max_side", "audio_point_window", "duration_tolerance"),
}


@dataclass
class Run:
    name: str
    judges: dict[str, str]  # stage -> model, as summary.json's `models`
    records: dict[str, ScoreRecord]  # id -> record
    config: dict = field(default_factory=dict)  # the run's resolved configuration (provenance)


def _views(records: Mapping[str, ScoreRecord]) -> dict[str, ResponseView]:
    return {rid: v for rid, rec in records.items() if (v := from_record(rec)) is not None}


def _score(
    runs: Mapping[str, Run], v: Judge, d: str, e: Judge, truth, resamples: int, seed: int
) -> dict:
    records = {name: r.records for name, r in runs.items()}
    combined, skipped = combine_all(records, v, d, e)
    result = evaluate(_views(combined), truth, resamples=resamples, seed=seed)
    facts = [f for rec in combined.values() for s in sentences(rec) for f in s.facts]
    result["combined"] = {
        "responses": len(combined),
        "skipped": len(skipped),
        "skipped_examples": dict(list(skipped.items())[:5]),
        "facts": len(facts),
        "facts_judged": sum(1 for f in facts if f.joint is not None and f.joint.value is not None),
    }
    return result


def _singles(runs: Mapping[str, Run], stage: Stage) -> list[Judge]:
    """Each distinct judge of `stage` among the runs, its verdicts read from the first run it judged."""
    seen: dict[str, Judge] = {}
    for name, run in runs.items():
        model = run.judges.get(stage)
        if model and model not in seen:
            seen[model] = single(model, name)
    return list(seen.values())


def _panels(singles: list[Judge], stat: dict[str, float | None]) -> list[Judge]:
    known = {model: s for model, s in stat.items() if s is not None}
    pool = [j for j in singles if not is_panel(j.model) and j.model in known]
    pool = sorted(pool, key=lambda j: -known[j.model])[:POOL]
    out = []
    for size in range(2, len(pool) + 1):
        for group in itertools.combinations(pool, size):
            members = [(j.model, j.home) for j in group]
            for rule in VOTES:
                if rule == "weighted":
                    weights = tuple((j.model, reliability_weight(known[j.model])) for j in group)
                    if not any(w for _, w in weights):
                        continue
                    out.append(panel(members, Rule("weighted", weights)))
                else:
                    out.append(panel(members, Rule(rule)))
    return out


def _rank_key(row: dict) -> tuple:
    return (
        -(row["value"] if row["value"] is not None else -1.0),
        -(row["murgat_s_pearson"] if row["murgat_s_pearson"] is not None else -2.0),
        len(row["members"]),
        VOTES.index(row["vote"]) if row["vote"] else -1,
        row["model"],
    )


def _row(judge: Judge, result: dict, stage: Stage) -> dict:
    block, key = STAT[stage]
    return {
        "model": judge.model,
        "members": list(judge.members),
        "runs": list(judge.sources),
        "vote": judge.rule.vote if judge.rule else None,
        "weights": dict(judge.rule.weights)
        if judge.rule and judge.rule.vote == "weighted"
        else None,
        "value": result[block].get(key),
        "n": result[block].get("n", result[block].get("n_sentences")),
        "murgat_s_pearson": result["murgat_s"].get("pearson"),
    }


def _choose(runs: Mapping[str, Run], stage: Stage, truth) -> tuple[Judge, dict, list[dict]]:
    """The best judge for `stage`, its row, and every candidate's row ranked."""
    rows: list[tuple[dict, Judge]] = []

    def measure(j: Judge) -> dict:
        home = runs[j.home]
        v = (
            j
            if stage == Stage.VERIFIABLE
            else single(home.judges.get(Stage.VERIFIABLE, ""), j.home)
        )
        d = j.home
        e = j if stage == Stage.ENTAIL else single(home.judges.get(Stage.ENTAIL, ""), j.home)
        row = _row(j, _score(runs, v, d, e, truth, 0, 0), stage)
        rows.append((row, j))
        return row

    singles = _singles(runs, stage)
    stat = {j.model: measure(j)["value"] for j in singles}
    if stage != Stage.DECOMPOSE:
        for j in _panels(singles, stat):
            measure(j)
    rows.sort(key=lambda rj: _rank_key(rj[0]))
    best_row, best = rows[0]
    if best_row["value"] is None:
        if len(singles) != 1:
            raise ValueError(
                f"no judge of the {stage} stage could be measured against the labels, "
                f"so none of its {len(singles)} judges can be chosen"
            )
        # One judge, in every run: nothing to choose, kept as the runs had it.
        best_row["note"] = (
            f"the only {stage} judge of the runs; not measurable on these labels "
            f"({STAT[stage][0]} {STAT[stage][1]} undefined)"
        )
    return best, best_row, [r for r, _ in rows]


def select(
    runs: Mapping[str, Run],
    truth: Mapping[str, ResponseView],
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """Each stage's best judge and the chosen combination measured as a whole (with intervals)."""
    chosen, stages = {}, {}
    for stage in (Stage.VERIFIABLE, Stage.DECOMPOSE, Stage.ENTAIL):
        judge, row, ranked = _choose(runs, stage, truth)
        chosen[stage] = judge
        block, key = STAT[stage]
        stages[stage] = {
            **row,
            "statistic": f"{block}.{key}",
            "candidates": len(ranked),
            "ranking": ranked[:10],
            "singles": [r for r in ranked if r["vote"] is None],
        }
    combination = _score(
        runs,
        chosen[Stage.VERIFIABLE],
        chosen[Stage.DECOMPOSE].home,
        chosen[Stage.ENTAIL],
        truth,
        resamples,
        seed,
    )
    return {"stages": stages, "combination": combination, "chosen": chosen}


def measured_settings(config: Mapping) -> dict:
    """The verdict settings (`VERDICT_KEYS`) of a run's stored configuration, and nothing else."""
    out = {}
    for key, fields in VERDICT_KEYS.items():
        value = config.get(key)
        if value is None:
            continue
        if fields is None:
            out[key] = value
        elif isinstance(value, Mapping):
            out[key] = {f: value[f] for f in fields if value.get(f) is not None}
        else:  # not a table: left for the validation below to name
            out[key] = value
    return out


def best_config(runs: Mapping[str, Run], chosen: Mapping[str, Judge]) -> dict:
    """The configuration `murgat score --config` runs the chosen combination with: each stage's
    judge, for a panel its vote, and the verdict settings of the decomposer's run (`VERDICT_KEYS`).
    ValueError when those settings are not valid ones, naming the run."""
    from ..config import RunConfig

    d = chosen[Stage.DECOMPOSE]
    out = measured_settings(runs[d.home].config or {})
    out.update(
        {
            "judge": d.model,
            "verifier": chosen[Stage.VERIFIABLE].model,
            "decomposer": d.model,
            "entailer": chosen[Stage.ENTAIL].model,
        }
    )
    panels = {}
    for stage in YES_NO:
        rule = chosen[stage].rule
        if rule is not None:
            panels[stage] = {
                "vote": rule.vote,
                **({"weights": dict(rule.weights)} if rule.vote == "weighted" else {}),
            }
    if panels:
        out["panel"] = panels
    try:
        RunConfig.model_validate(out)
    except ValueError as e:  # pydantic's ValidationError is one
        raise ValueError(f"run {d.home}'s stored configuration: {e}") from None
    return out


__all__ = ["Run", "STAT", "VERDICT_KEYS", "best_config", "measured_settings", "select"]
