"""The report's figures: matplotlib (Agg, no display), each returned as PNG bytes.

Every figure draws something even without data (its axes and a line saying what is missing),
so an image is never blank and the page says why a chart is empty.
"""

from __future__ import annotations

import io
from collections import defaultdict

from .rundata import MODALITIES, PROBLEM_LABELS, PROBLEMS, Cell

STAGES = ("decontext", "verifiable", "decompose", "entail")
MARKERS = "osD^vP*Xh<>p"


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _empty(ax, why: str) -> None:
    ax.text(0.5, 0.5, why, ha="center", va="center", wrap=True, transform=ax.transAxes, color="#555")


def _interval(cell: Cell, metric: str):
    ci = cell.summary.get(f"{metric}_ci")
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
        return ci
    return None


def _styles(cells: list[Cell]):
    plt = _plt()
    models = sorted({c.model for c in cells})
    strategies = sorted({c.strategy for c in cells})
    colors = plt.get_cmap("tab10")
    return ({m: colors(i % 10) for i, m in enumerate(models)},
            {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(strategies)})


def scatter(cells: list[Cell], x: str, y: str, xlabel: str, ylabel: str, title: str) -> bytes:
    """One point per model x strategy, its 95% intervals as error bars."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    color, marker = _styles(cells)
    drawn = 0
    for c in cells:
        vx, vy = c.summary.get(x), c.summary.get(y)
        if not isinstance(vx, (int, float)) or not isinstance(vy, (int, float)):
            continue
        cx, cy = _interval(c, x), _interval(c, y)
        xerr = [[max(vx - cx[0], 0)], [max(cx[1] - vx, 0)]] if cx else None
        yerr = [[max(vy - cy[0], 0)], [max(cy[1] - vy, 0)]] if cy else None
        ax.errorbar([vx], [vy], xerr=xerr, yerr=yerr, fmt=marker[c.strategy], color=color[c.model],
                    markersize=8, capsize=3, label=_short(c.label))
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
    return _png(fig)


def distribution(cells: list[Cell]) -> bytes:
    """Per-response MURGAT-S: one box (with its points) per model x strategy."""
    plt = _plt()
    shown = [c for c in cells if c.murgat_s]
    fig, ax = plt.subplots(figsize=(7.2, 0.9 + 0.45 * max(len(shown), 3)))
    if shown:
        data = [c.murgat_s for c in shown]
        ax.boxplot(data, orientation="horizontal", widths=0.6, showfliers=False)
        for i, values in enumerate(data, start=1):
            # deterministic jitter: the same report from the same files
            step = 0.5 / max(len(values), 1)
            ys = [i - 0.25 + (k * step) % 0.5 for k in range(len(values))]
            ax.scatter(values, ys, s=6, alpha=0.35, color="#1f77b4")
        ax.set_yticks(range(1, len(shown) + 1), [_short(f"{c.label} (n={len(c.murgat_s)})", 50) for c in shown])
        ax.invert_yaxis()
    else:
        _empty(ax, "no scored response has a MURGAT-S")
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("MURGAT-S per response")
    ax.set_title("Distribution of per-response MURGAT-S")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def problems(cells: list[Cell]) -> bytes:
    """Citation problems per modality, summed over the cells: one bar group per modality."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for c in cells:
        for key, n in c.citations.items():
            totals[key] += n
    width = 0.8 / len(PROBLEMS)
    colors = plt.get_cmap("Set2")
    any_citation = sum(totals.values()) > 0
    for k, p in enumerate(PROBLEMS):
        xs = [i + (k - (len(PROBLEMS) - 1) / 2) * width for i in range(len(MODALITIES))]
        ys = [totals[(m, p)] for m in MODALITIES]
        bars = ax.bar(xs, ys, width, label=PROBLEM_LABELS[p], color=colors(k))
        ax.bar_label(bars, fontsize=7)
    ax.set_xticks(range(len(MODALITIES)),
                  [f"{m}\n({sum(n for (mm, _), n in totals.items() if mm == m)} citations)" for m in MODALITIES])
    ax.set_ylabel("citations")
    ax.set_title("Citation problems per modality")
    ax.legend(fontsize=8)
    if not any_citation:
        _empty(ax, "no citation in the scored responses")
    return _png(fig)


def hallucinated(cells: list[Cell]) -> bytes:
    """Audio citations written by responders that were given no audio."""
    plt = _plt()
    known = [c for c in cells if c.heard_known]
    fig, ax = plt.subplots(figsize=(7.2, 0.9 + 0.45 * max(len(known), 3)))
    if known:
        ys = range(len(known))
        bars = ax.barh(list(ys), [c.hallucinated_audio for c in known], color="#d62728")
        ax.bar_label(bars, labels=[f"{c.hallucinated_audio} in {c.deaf_responses} deaf responses" for c in known],
                     fontsize=7, padding=3)
        ax.set_yticks(list(ys), [_short(c.label, 50) for c in known])
        ax.invert_yaxis()
        ax.set_xlim(0, max([c.hallucinated_audio for c in known] + [1]) * 1.5)
    else:
        _empty(ax, "no generation rows (media.heard_audio): give a `murgat run` folder")
    ax.set_xlabel("audio citations from responses whose model heard no audio")
    ax.set_title("Hallucinated audio grounding")
    return _png(fig)


def stage_totals(summaries: list[dict]) -> dict[str, dict[str, float]]:
    """Judge calls, cache hits, model calls and wall time per stage, summed over summaries."""
    out: dict[str, dict[str, float]] = {}
    for s in summaries:
        stages = s.get("stages") if isinstance(s.get("stages"), dict) else {}
        for name, v in stages.items():
            if not isinstance(v, dict):
                continue
            t = out.setdefault(str(name), {"calls": 0, "cache_hits": 0, "model_calls": 0, "wall_s": 0.0})
            for k in t:
                x = v.get(k)
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    t[k] += x
    return out


def throughput(t: dict[str, float]) -> float | None:
    """Model calls per second of the stage's wall time (None when it took no measurable time)."""
    return t["model_calls"] / t["wall_s"] if t["wall_s"] > 1e-6 and t["model_calls"] else None


def stages(summaries: list[dict]) -> bytes:
    plt = _plt()
    totals = stage_totals(summaries)
    names = [s for s in STAGES if s in totals] + sorted(set(totals) - set(STAGES))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.6, 3.8))
    if names:
        xs = range(len(names))
        b1 = a1.bar([x - 0.2 for x in xs], [totals[n]["model_calls"] for n in names], 0.4, label="model calls")
        b2 = a1.bar([x + 0.2 for x in xs], [totals[n]["cache_hits"] for n in names], 0.4, label="cache hits")
        a1.bar_label(b1, fontsize=7)
        a1.bar_label(b2, fontsize=7)
        a1.set_xticks(list(xs), names)
        a1.legend(fontsize=8)
        rates = [throughput(totals[n]) for n in names]
        b3 = a2.bar(list(xs), [r or 0 for r in rates], 0.5, color="#2ca02c")
        a2.bar_label(b3, labels=["-" if r is None else f"{r:.1f}" for r in rates], fontsize=7)
        a2.set_xticks(list(xs), names)
    else:
        _empty(a1, "no stage counters in summary.json")
        _empty(a2, "no stage counters in summary.json")
    a1.set_title("Judge calls per stage")
    a1.set_ylabel("calls")
    a2.set_title("Throughput per stage")
    a2.set_ylabel("model calls / s of stage wall time")
    return _png(fig)
