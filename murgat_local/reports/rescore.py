"""`murgat rescore`: scores recomputed from recorded verdicts (ours, or the reference's scored
JSON), with no model: the records under the scoring rule of `compat`, and their summary."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from ..inputs.responses import iter_records
from ..jsonl import dumps_record
from ..metrics.intervals import IntervalValues, add_intervals
from ..metrics.scores import summarize
from ..pipeline.records import rescore_record, rescore_reference_entry
from ..results import ReadError, ScoreRecord, Summary, as_model, read_score_lines
from ..results.versions import validate

# summary.json's headline numbers, with their intervals, as `murgat rescore` prints them.
HEADLINE = ("coverage", "precision", "recall", "f1", "murgat_s")


@dataclass
class Rescored:
    summary: Summary
    bad: list[ReadError]  # record lines that could not be read, left out of the numbers

    def headline(self) -> dict:
        """The headline numbers and their intervals, and `by_group` when grouped."""
        written = self.summary.model_fields_set
        keys = [k for m in HEADLINE for k in (m, f"{m}_ci") if k in written]
        keys += ["by_group"] if "by_group" in written else []
        dumped = self.summary.model_dump(include=set(keys), exclude_unset=True)
        return {k: dumped[k] for k in keys}


def _is_json_list(path: pathlib.Path) -> bool:
    """Whether a file holds one JSON list (the reference's scored entries), not JSON lines."""
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def _not_rescorable(rec: ScoreRecord) -> str | None:
    """Why a record that was scored holds nothing to rescore from (None: it holds its trace)."""
    if rec.status == "ok" and (rec.trace is None or "sentences" not in rec.trace.model_fields_set):
        return "status ok but no trace of its sentences to rescore from"
    return None


def _rescore_entry(obj: object, where: str, compat: str | None) -> ScoreRecord:
    """An entry of a JSON list rescored: the reference's (its `evaluations`), or one of ours.
    ValueError: an entry that is neither."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: not a scored record")
    if "evaluations" in obj:
        return rescore_reference_entry(obj)
    rec = validate(ScoreRecord, obj, "score record")
    if isinstance(rec, str):
        raise ValueError(f"{where}: {rec}")
    return rescore_record(rec, compat)


def rescore(
    scored: pathlib.Path,
    compat: str | None,
    group_by: list[str],
    resamples: int,
    out: pathlib.Path | None = None,
) -> Rescored:
    """The records of `scored` rescored (written to `out` as JSONL when given) and summarized,
    with `resamples` bootstrap resamples per interval. Our scores.jsonl is read by the one
    record reader (`results`): a line it cannot read, or a scored one without the trace of its
    sentences, is kept in `bad`, the rest rescored.
    ValueError: an entry of the reference's JSON list that is not a record."""
    records: list[ScoreRecord] = []
    bad: list[ReadError] = []
    listed = _is_json_list(scored)
    if listed:  # the reference's scored JSON: its entries, as it wrote them
        for _, source, obj in iter_records(scored):
            records.append(_rescore_entry(obj, f"{scored} {source}", compat))
    else:
        for line, rec in read_score_lines(scored):
            if isinstance(rec, ReadError):
                bad.append(rec)
            elif (why := _not_rescorable(rec)) is not None:
                bad.append(ReadError(scored, line, why))
            else:
                records.append(rescore_record(rec, compat))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for r in records:
                # a JSON list's entries are written with the keys they had (no schema_version)
                data = r.model_dump(exclude_unset=True) if listed else r.dump()
                fh.write(dumps_record(data, sort_keys=True) + "\n")
    summary = summarize(records, group_by)
    add_intervals(summary, IntervalValues.of(records, group_by), n_resamples=resamples)
    summary["mode"] = compat or (records[0].mode if records else "default")
    return Rescored(as_model(Summary, summary), bad)
