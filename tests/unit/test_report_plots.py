"""`murgat report`'s plots: decoded non-uniform PNGs, and names that look like math drawn as plain
text."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil

import numpy as np
from support.report_fixtures import _score
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.reports.scan import load


def _plots(text):
    return {
        m.group(1): base64.b64decode(m.group(2))
        for m in re.finditer(
            r'<img id="plot-([\w-]+)" class="plot" alt="[^"]*" src="data:image/png;base64,([^"]+)"',
            text,
        )
    }


def test_plots_are_non_uniform_pngs(report):
    from PIL import Image

    plots = _plots(report.read_text())
    assert set(plots) == {
        "accuracy-vs-murgat",
        "coverage-vs-f1",
        "murgat-distribution",
        "citation-problems",
        "hallucinated-audio",
        "stages",
    }
    for name, png in plots.items():
        assert png[:8] == b"\x89PNG\r\n\x1a\n", name
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100 and pixels.std() > 5, name


def _texts(fig):
    import matplotlib.text

    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


MATH_MODELS = ["$a^b^c$", "$\\nosuchcommand$", "m_{3}$"]


def test_names_that_look_like_math_are_plain_text(tmp_path, media_root):
    """Model, run and stage names reach matplotlib as text: `$a^b^c$` is not mathtext."""
    from murgat_local.reports import plots

    rows = [
        {
            "id": f"r{i}",
            "video": "colors",
            "model": m,
            "model_generation": "The screen is red (visual, 0:00).",
        }
        for i, m in enumerate(MATH_MODELS)
    ]
    a = tmp_path / "$x^$" / "score"
    _score(media_root, rows, a)
    b = tmp_path / "$\\bad" / "score"
    shutil.copytree(a, b)
    summary = json.loads((b / "summary.json").read_text())
    summary["stages"]["$\\frac{$"] = {"calls": 2, "model_calls": 2, "cache_hits": 0, "wall_s": 0.5}
    summary["models"]["entail"] = "$\\undefined$"
    (b / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(out)])
    assert r.exit_code == 0, r.output
    cells, sources = load([a, b], 10)
    figures = plots.figures([c for c in cells if c.in_table], sources)
    shown = set()
    for fig in figures.values():
        plots.png(fig)  # renders, as the report does, then the texts are read back
        for t in _texts(fig):
            shown.add(t.get_text())
            if "$" in t.get_text():
                assert not t.get_parse_math(), t.get_text()
    for m in MATH_MODELS:
        assert f"{m} / - ($x^$/score)" in shown and f"{m} / - ($\\bad/score)" in shown
    assert "$\\frac{$" in shown
