"""The report's figures: matplotlib `Figure` objects (no pyplot, no display), rendered to PNG by `png`.

Every figure draws something even without data (its axes and a line saying what is missing),
so an image is never blank and the page says why a chart is empty.

Names from the input (models, strategies, runs, stages) are text, never markup: `png` turns
mathtext off for every text of a figure and for those drawing makes (`$a^b^c$` is seven
characters, not a formula), and shows lone surrogates and control characters as escapes, as the
HTML does.

Several runs compared: each row keeps a colour per (run, model) and a marker per (run, strategy),
so two runs of the same model differ in both; a run's own charts (stages) use its first row's colour.
"""

from __future__ import annotations

import io
from collections import defaultdict
from contextlib import contextmanager

from ..results import Summary
from ..stages import PROTOCOL
from .drilldown import printable
from .rundata import MODALITIES, PROBLEM_LABELS, PROBLEMS, Cell, Source, finite, interval, metric

MARKERS = "osD^vP*Xh<>p"


@contextmanager
def _plain_text():
    """Every Text made or drawn inside is plain: no mathtext, no TeX."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def _figure(**kwargs):
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def png(fig) -> bytes:
    """The figure as PNG bytes, every text in it plain and printable (whoever built it)."""
    import matplotlib.text

    buf = io.BytesIO()
    with _plain_text():  # also for the tick labels made while drawing
        for t in fig.findobj(matplotlib.text.Text):
            t.set_parse_math(False)
            t.set_text(printable(t.get_text()))
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def _short(text, n: int = 40) -> str:
    text = printable(text, 4 * n)
    return text if len(text) <= n else text[: n - 1] + "…"


def _empty(ax, why: str) -> None:
    ax.text(
        0.5, 0.5, why, ha="center", va="center", wrap=True, transform=ax.transAxes, color="#555"
    )


class Styles:
    """A colour per (run, model) and a marker per (run, strategy), in the rows' order."""

    def __init__(self, cells: list[Cell]):
        import matplotlib

        colours = list(dict.fromkeys((c.run_name, c.model) for c in cells))
        markers = list(dict.fromkeys((c.run_name, c.strategy) for c in cells))
        # every other run's markers are hollow: equal numbers from two runs stay visible as two points
        self._hollow = set(list(dict.fromkeys(c.run_name for c in cells))[1::2])
        palette = matplotlib.colormaps["tab10" if len(colours) <= 10 else "tab20"]
        self._colour = {k: palette(i % palette.N) for i, k in enumerate(colours)}
        self._marker = {k: MARKERS[i % len(MARKERS)] for i, k in enumerate(markers)}
        self._run: dict = {}
        for c in cells:
            self._run.setdefault(c.run_name, self.colour(c))

    def colour(self, cell: Cell):
        return self._colour.get((cell.run_name, cell.model), "#1f77b4")

    def marker(self, cell: Cell) -> str:
        return self._marker.get((cell.run_name, cell.strategy), "o")

    def run(self, name: str):
        return self._run.get(name, "#1f77b4")

    def face(self, cell: Cell):
        return "none" if cell.run_name in self._hollow else self.colour(cell)


def scatter(
    cells: list[Cell],
    x: str,
    y: str,
    xlabel: str,
    ylabel: str,
    title: str,
    styles: Styles | None = None,
):
    """One point per model x strategy, its 95% intervals as error bars."""
    styles = styles or Styles(cells)
    fig = _figure(figsize=(6.4, 4.6))
    ax = fig.subplots()
    drawn = 0
    for c in cells:
        vx, vy = finite(metric(c.summary, x)), finite(metric(c.summary, y))
        if vx is None or vy is None:
            continue
        cx = interval(metric(c.summary, f"{x}_ci"))
        cy = interval(metric(c.summary, f"{y}_ci"))
        xerr = [[max(vx - cx[0], 0)], [max(cx[1] - vx, 0)]] if cx else None
        yerr = [[max(vy - cy[0], 0)], [max(cy[1] - vy, 0)]] if cy else None
        ax.errorbar(
            [vx],
            [vy],
            xerr=xerr,
            yerr=yerr,
            fmt=styles.marker(c),
            color=styles.colour(c),
            markerfacecolor=styles.face(c),
            markeredgewidth=1.5,
            markersize=9,
            capsize=3,
            label=_short(c.label),
        )
        drawn += 1
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=7, loc="best", ncol=1 if drawn <= 8 else 2)
    else:
        _empty(ax, f"no model x strategy has both {xlabel} and {ylabel}")
    return fig


def distribution(cells: list[Cell], styles: Styles | None = None):
    """Per-response MURGAT-S: one box (with its points, in the row's colour and marker) per model x strategy."""
    styles = styles or Styles(cells)
    shown = [c for c in cells if c.murgat_s]
    fig = _figure(figsize=(7.2, 0.9 + 0.45 * max(len(shown), 3)))
    ax = fig.subplots()
    if shown:
        data = [c.murgat_s for c in shown]
        ax.boxplot(
            data,
            orientation="horizontal",
            widths=0.6,
            showfliers=False,
            medianprops={"color": "black"},
        )
        for i, (c, values) in enumerate(zip(shown, data), start=1):
            # deterministic jitter: the same report from the same files
            step = 0.5 / max(len(values), 1)
            ys = [i - 0.25 + (k * step) % 0.5 for k in range(len(values))]
            ax.scatter(values, ys, s=10, alpha=0.5, color=styles.colour(c), marker=styles.marker(c))
        ax.set_yticks(
            range(1, len(shown) + 1),
            [_short(f"{c.label} (n={len(c.murgat_s)})", 50) for c in shown],
        )
        ax.invert_yaxis()
    else:
        _empty(ax, "no scored response has a MURGAT-S")
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("MURGAT-S per response")
    ax.set_title("Distribution of per-response MURGAT-S")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _by_run(cells: list[Cell]) -> dict[str, list[Cell]]:
    runs: dict[str, list[Cell]] = {}
    for c in cells:
        runs.setdefault(c.run_name, []).append(c)
    return runs


def problems(cells: list[Cell]):
    """Citation problems per modality, summed over each run's cells: one bar group per modality,
    one panel per run."""
    import matplotlib

    runs = _by_run(cells) or {"": []}
    fig = _figure(figsize=(7.2, 0.6 + 3.6 * len(runs)))
    axes = fig.subplots(len(runs), 1, squeeze=False)[:, 0]
    colours = matplotlib.colormaps["Set2"]
    width = 0.8 / len(PROBLEMS)
    for ax, (run, run_cells) in zip(axes, runs.items()):
        totals: dict[tuple[str, str], int] = defaultdict(int)
        for c in run_cells:
            for key, n in c.citations.items():
                totals[key] += n
        for k, p in enumerate(PROBLEMS):
            xs = [i + (k - (len(PROBLEMS) - 1) / 2) * width for i in range(len(MODALITIES))]
            bars = ax.bar(
                xs,
                [totals[(m, p)] for m in MODALITIES],
                width,
                label=PROBLEM_LABELS[p],
                color=colours(k),
            )
            ax.bar_label(bars, fontsize=7)
        ax.set_xticks(
            range(len(MODALITIES)),
            [
                f"{m}\n({sum(n for (mm, _), n in totals.items() if mm == m)} citations)"
                for m in MODALITIES
            ],
        )
        ax.set_ylabel("citations")
        ax.set_title(
            "Citation problems per modality" + (f": {_short(run, 60)}" if len(runs) > 1 else "")
        )
        ax.legend(fontsize=8)
        if sum(totals.values()) == 0:
            _empty(ax, "no citation in the scored responses")
    fig.set_layout_engine("tight")
    return fig


def hallucinated(cells: list[Cell], styles: Styles | None = None):
    """Audio citations written by responders that were given no audio."""
    styles = styles or Styles(cells)
    known = [c for c in cells if c.heard_known]
    fig = _figure(figsize=(7.2, 0.9 + 0.45 * max(len(known), 3)))
    ax = fig.subplots()
    if known:
        ys = range(len(known))
        bars = ax.barh(
            list(ys), [c.hallucinated_audio for c in known], color=[styles.colour(c) for c in known]
        )
        ax.bar_label(
            bars,
            labels=[f"{c.hallucinated_audio} in {c.deaf_responses} deaf responses" for c in known],
            fontsize=7,
            padding=3,
        )
        ax.set_yticks(list(ys), [_short(c.label, 50) for c in known])
        ax.invert_yaxis()
        ax.set_xlim(0, max([c.hallucinated_audio for c in known] + [1]) * 1.5)
    else:
        _empty(ax, "no generation rows (media.heard_audio): give a `murgat run` folder")
    ax.set_xlabel("audio citations from responses whose model heard no audio")
    ax.set_title("Hallucinated audio grounding")
    return fig


def stage_totals(summaries: list[Summary]) -> dict[str, dict[str, float]]:
    """Judge calls, cache hits, model calls and wall time per stage, summed over summaries
    (a value that is not a finite number counts as 0; rundata notes it)."""
    out: dict[str, dict[str, float]] = {}
    for s in summaries:
        for name, v in (s.stages or {}).items():
            t = out.setdefault(
                str(name), {"calls": 0, "cache_hits": 0, "model_calls": 0, "wall_s": 0.0}
            )
            for k in t:
                x = finite(getattr(v, k))
                if x is not None:
                    t[k] += x
    return out


def run_stage_totals(sources: list[Source]) -> dict[str, dict[str, dict[str, float]]]:
    """stage_totals per run (its sources' summaries), runs in input order."""
    runs: dict[str, list[Summary]] = {}
    for s in sources:
        runs.setdefault(s.run_name, []).extend([s.summary] if s.summary is not None else [])
    return {run: stage_totals(summaries) for run, summaries in runs.items()}


def stage_order(names) -> list[str]:
    return [s for s in PROTOCOL if s in names] + sorted(set(names) - set(PROTOCOL))


def throughput(t: dict[str, float]) -> float | None:
    """Model calls per second of the stage's wall time (None when it took no measurable time)."""
    return t["model_calls"] / t["wall_s"] if t["wall_s"] > 1e-6 and t["model_calls"] else None


def stages(sources: list[Source], styles: Styles | None = None):
    """Model calls and cache hits (hatched) per stage, and model calls per second: a bar per run."""
    styles = styles or Styles([c for s in sources for c in s.cells.values() if c.in_table])
    runs = run_stage_totals(sources)
    names = stage_order({n for totals in runs.values() for n in totals})
    multi = len(runs) > 1
    fig = _figure(figsize=(9.6, 3.8))
    a1, a2 = fig.subplots(1, 2)
    if names:
        xs = range(len(names))
        width = 0.8 / (2 * len(runs))
        for r, (run, totals) in enumerate(runs.items()):
            colour, zero = (
                styles.run(run),
                {"calls": 0, "cache_hits": 0, "model_calls": 0, "wall_s": 0.0},
            )
            per = [totals.get(n, zero) for n in names]
            at = [x - 0.4 + (2 * r + 0.5) * width for x in xs]
            b1 = a1.bar(
                at,
                [t["model_calls"] for t in per],
                width,
                color=colour,
                label=_short(run, 30) if multi else "model calls",
            )
            b2 = a1.bar(
                [x + width for x in at],
                [t["cache_hits"] for t in per],
                width,
                color=colour,
                alpha=0.4,
                hatch="//",
                label=f"{_short(run, 30)} (cache hits)" if multi else "cache hits",
            )
            a1.bar_label(b1, fontsize=7)
            a1.bar_label(b2, fontsize=7)
            rates = [throughput(t) for t in per]
            rate_width = 0.8 / len(runs)
            b3 = a2.bar(
                [x - 0.4 + (r + 0.5) * rate_width for x in xs],
                [v or 0 for v in rates],
                rate_width,
                color=colour,
                label=_short(run, 30) if multi else "_nolegend_",
            )
            a2.bar_label(b3, labels=["-" if v is None else f"{v:.1f}" for v in rates], fontsize=7)
        a1.set_xticks(list(xs), [_short(n, 16) for n in names])
        a2.set_xticks(list(xs), [_short(n, 16) for n in names])
        a1.legend(fontsize=7)
        if multi:
            a2.legend(fontsize=7)
    else:
        _empty(a1, "no stage counters in summary.json")
        _empty(a2, "no stage counters in summary.json")
    a1.set_title("Judge calls per stage")
    a1.set_ylabel("calls")
    a2.set_title("Throughput per stage")
    a2.set_ylabel("model calls / s of stage wall time")
    return fig


def figures(cells: list[Cell], sources: list[Source]) -> dict:
    """Every figure of the report, by its key, for the table's rows and every source's stages."""
    styles = Styles(cells)
    return {
        "accuracy-vs-murgat": scatter(
            cells, "murgat_s", "qa_accuracy", "MURGAT-S", "accuracy", "Accuracy vs MURGAT-S", styles
        ),
        "coverage-vs-f1": scatter(
            cells,
            "coverage",
            "f1",
            "coverage",
            "attribution F1",
            "Coverage vs attribution F1",
            styles,
        ),
        "murgat-distribution": distribution(cells, styles),
        "citation-problems": problems(cells),
        "hallucinated-audio": hallucinated(cells, styles),
        "stages": stages(sources, styles),
    }
