"""Reliability diagrams of a judge's p_yes against people's labels (`murgat meta-eval`'s
`calibration` blocks), as PNG: written next to meta_eval.json and shown by `murgat report
--meta-eval`. Drawn from the recorded bins only, so both show the same numbers.

Per bin of p_yes: the share of human YES (a point, its size by the bin's count) against the
bin's mean p_yes, the diagonal a perfectly calibrated judge lies on, and the ECE, Brier and
AUROC in the title. A stage without pairs still gets its axes and a line saying why.
"""

from __future__ import annotations

import math
import pathlib
import re

from ..results import MetaEval
from ..results.meta_blocks import Calibration
from ..stages import Stage
from .drilldown import esc
from .plots import _empty, _figure, png

STAGE_LABELS: dict[str, str] = {
    Stage.VERIFIABLE: "verifiable (subtask 1)",
    Stage.ENTAIL: "entail: joint (subtask 3)",
    Stage.PRECISE: "precise citations",
}


def _fmt(v) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) and math.isfinite(v) else "n/a"


def caption(block: Calibration) -> str:
    return (
        f"n {block.n or 0} · ECE {_fmt(block.ece)} · Brier {_fmt(block.brier)}"
        f" · AUROC {_fmt(block.auroc)}"
    )


def diagram(block: Calibration, title: str):
    """The reliability diagram of one stage's calibration block (a matplotlib Figure)."""
    fig = _figure(figsize=(4.2, 4.2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="#999", linestyle="--", linewidth=1, label="calibrated")
    # (low, high, count, mean p_yes, share YES) of each bin that holds pairs
    bins = [
        (b.low, b.high, b.count, b.mean_confidence, b.observed_frequency)
        for b in block.bins
        if b.count and b.mean_confidence is not None and b.low is not None and b.high is not None
    ]
    if bins:
        total = sum(count for _, _, count, _, _ in bins)
        ax.bar(
            [(low + high) / 2 for low, high, _, _, _ in bins],
            [count / total for _, _, count, _, _ in bins],
            width=[high - low for low, high, _, _, _ in bins],
            color="#dde6f0",
            label="share of pairs",
        )
        ax.plot(
            [mean for _, _, _, mean, _ in bins],
            [share for _, _, _, _, share in bins],
            marker="o",
            color="#1f77b4",
            label="human YES rate",
        )
        ax.legend(loc="upper left", fontsize=7)
    else:
        why = block.why("p_yes") or "no pairs with a p_yes and a label"
        _empty(ax, why)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("judge p_yes")
    ax.set_ylabel("share labelled YES by people")
    ax.set_title(f"{title}\n{caption(block)}", fontsize=8)
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._")[:80] or "run"


def file_name(run: str, stage: str) -> str:
    """The PNG's name in meta-eval's OUT for a run's stage."""
    return f"reliability_{_slug(run)}_{stage}.png"


def write_diagrams(report: MetaEval, out: pathlib.Path) -> list[pathlib.Path]:
    """One PNG per run and stage of meta_eval.json's `calibration` blocks, written into `out`."""
    written = []
    for run, block in (report.runs or {}).items():
        for stage, cal in block.calibration.items():
            path = out / file_name(run, stage)
            path.write_bytes(png(diagram(cal, f"{run}: {STAGE_LABELS.get(stage, stage)}")))
            written.append(path)
    return written


def section(report: MetaEval, data_uri) -> str:
    """The report page's "Judge calibration" section from a meta_eval.json (`data_uri` turns PNG
    bytes into an img src). Empty when no run has a calibration block."""
    figs = []
    for run, block in (report.runs or {}).items():
        for stage, cal in block.calibration.items():
            title = f"{run}: {STAGE_LABELS.get(stage, stage)}"
            src = data_uri(png(diagram(cal, title)))
            figs.append(
                f'<figure><img class="plot reliability" alt="{esc(title)}" src="{src}">'
                f"<figcaption>{esc(title)}: {esc(caption(cal))}</figcaption>"
                "</figure>"
            )
    if not figs:
        return ""
    return (
        '<h2>Judge calibration</h2>\n<p class="meta">From <code>murgat meta-eval</code>: per '
        "yes/no stage, the share of verdicts people labelled YES against the judge's p_yes, in 15 "
        "equal-width bins (the diagonal is a calibrated judge).</p>\n"
        f'<div class="plots">{"".join(figs)}</div>\n'
    )


__all__ = ["caption", "diagram", "file_name", "section", "write_diagrams"]
