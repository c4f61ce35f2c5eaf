"""Results per group in `murgat report --group-by FIELD`: a table per field, a row per model x
strategy and group.

The report computes each model x strategy's groups from its scores.jsonl with the functions
`murgat score` uses (`Grouped` summaries, `IntervalValues`, `add_intervals`) and the resamples
its summary.json records, so a group's numbers are the ones `murgat score --group-by` writes,
whichever fields the score run was given. Values that are not numbers read as missing, as the
rest of the report reads them; a line that is not a valid score record is left out (the scan
lists it among the notes on the inputs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..metrics.groups import Grouped
from ..metrics.intervals import IntervalValues, add_intervals
from ..metrics.scores import METRICS as SCORED
from ..metrics.scores import Summary
from ..metrics.stats import RESAMPLES
from ..results import Numbers, ReadError, ScoreRecord, as_model, read_score_records
from ..results import Summary as SummaryFile
from .drilldown import esc, num
from .rundata import METRICS, Cell, Source, finite, interval


def _numbers(record: ScoreRecord) -> ScoreRecord:
    """The record as the summary reads it, each score a float, with every number that is not a
    finite one (infinity, an integer too large for a float) read as missing."""
    scores = (*SCORED, "scored_fraction")
    return record.model_copy(update={k: finite(getattr(record, k)) for k in scores})


def _resamples(summary: SummaryFile | None) -> int:
    n = summary.ci.resamples if summary is not None and summary.ci is not None else None
    return RESAMPLES if n is None else n


Groups = dict[str, dict[str, Numbers]]  # field -> value -> its numbers


def by_group(sources: Sequence[Source], fields: Sequence[str]) -> dict[int, Groups]:
    """Per cell (by `id(cell)`): `by_group[FIELD][VALUE]` over its records, with intervals."""
    gathered: dict[int, tuple[Grouped, IntervalValues, int]] = {}
    for s in sources:
        try:
            for record in read_score_records(s.scores):
                if isinstance(record, ReadError):
                    continue  # the scan has listed it
                r = _numbers(record)
                cell = s.cell_for(record)
                summaries, values, _ = gathered.setdefault(
                    id(cell),
                    (Grouped(fields, Summary), IntervalValues(fields), _resamples(s.summary)),
                )
                summaries.add(r)
                values.add(r)
        except OSError:
            continue  # the scan has noted it
    out = {}
    for key, (summaries, values, resamples) in gathered.items():
        section = {"by_group": summaries.result()}
        add_intervals(section, values, n_resamples=resamples)
        # read as the same file's `by_group` would be
        out[key] = as_model(SummaryFile, section).by_group or {}
    return out


def _metric(s: Numbers, metric: str) -> str:
    v, ci = finite(getattr(s, metric)), interval(getattr(s, f"{metric}_ci"))
    text = num(v) + (f' <span class="ci">[{num(ci[0])}, {num(ci[1])}]</span>' if ci else "")
    return f'<td class="num" data-metric="{metric}">{text}</td>'


def section(
    cells: Sequence[Cell],
    groups: Mapping[int, Groups],
    fields: Iterable[str],
    labels: Mapping[str, str],
) -> str:
    """The report's "Results per group": a table per field, a row per model x strategy and group."""
    parts = []
    for field in fields:
        rows = []
        for i, c in enumerate(cells):
            for value, s in (groups.get(id(c)) or {}).get(field, {}).items():
                counts = "".join(
                    f'<td class="num" data-metric="{k}">{esc(getattr(s, k))}</td>'
                    for k in ("responses", "scored")
                )
                rows.append(
                    f'<tr data-cell="{i}" data-group="{esc(value)}"><td>{esc(c.label)}</td>'
                    f"<td>{esc(value)}</td>{counts}"
                    + "".join(_metric(s, m) for m in METRICS)
                    + "</tr>"
                )
        head = "".join(f"<th>{esc(labels.get(m, m))}</th>" for m in METRICS)
        parts.append(
            f'<h3>By {esc(field)}</h3><table class="groups" data-field="{esc(field)}"><thead><tr>'
            f"<th>model / strategy</th><th>{esc(field)}</th><th>responses</th><th>scored</th>{head}"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    return (
        '<h2>Results per group</h2><p class="meta">Means and 95% bootstrap intervals over each group\'s '
        "responses, computed from scores.jsonl as <code>murgat score --group-by</code> computes them; a "
        "response whose field holds a list is in each of its groups, one without the field in "
        "<code>(none)</code>.</p>" + "".join(parts)
    )


def data(cells: Sequence[Cell], groups: Mapping[int, Groups]) -> list[dict]:
    """The groups' numbers for the report's JSON block."""
    return [
        {
            "cell": c.label,
            "model": c.model,
            "strategy": c.strategy,
            "field": field,
            "group": value,
            **{k: getattr(s, k) for m in METRICS for k in (m, f"{m}_ci")},
        }
        for c in cells
        for field, values in (groups.get(id(c)) or {}).items()
        for value, s in values.items()
    ]
