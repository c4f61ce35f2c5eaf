"""`murgat rescore`: scores recomputed from recorded verdicts (ours, or the reference's scored
JSON), with no model: the records under the scoring rule of `compat`, and their summary."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from ..inputs.responses import iter_records
from ..jsonl import dumps_record
from ..metrics.intervals import IntervalValues, add_intervals
from ..metrics.scores import summarize
from ..pipeline.records import rescore_record

# summary.json's headline numbers, with their intervals, as `murgat rescore` prints them.
HEADLINE = ("coverage", "precision", "recall", "f1", "murgat_s")


@dataclass
class Rescored:
    summary: dict

    def headline(self) -> dict:
        """The headline numbers and their intervals, and `by_group` when grouped."""
        keys = [k for m in HEADLINE for k in (m, f"{m}_ci") if k in self.summary]
        keys += ["by_group"] if "by_group" in self.summary else []
        return {k: self.summary[k] for k in keys}


def rescore(
    scored: pathlib.Path,
    compat: str | None,
    group_by: list[str],
    resamples: int,
    out: pathlib.Path | None = None,
) -> Rescored:
    """The records of `scored` rescored (written to `out` as JSONL when given) and summarized,
    with `resamples` bootstrap resamples per interval. ValueError: a row that is not a record."""
    records = []
    for _, source, obj in iter_records(scored):
        if not isinstance(obj, dict):
            raise ValueError(f"{scored} {source}: not a scored record")
        records.append(rescore_record(obj, compat))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(dumps_record(r, sort_keys=True) + "\n")
    summary = summarize(records, group_by)
    add_intervals(summary, IntervalValues.of(records, group_by), n_resamples=resamples)
    summary["mode"] = compat or (records[0].get("mode") if records else "default")
    return Rescored(summary)
