"""`murgat report`: one self-contained HTML file from `murgat score` / `murgat run` folders.

No network: the styles and the small script are inline, the plots are PNG data URIs, no URL
names another host. Values from the input are escaped text (see `drilldown.esc`); data the script
needs is JSON in a `<script type="application/json">` block with `<`, `>`, `&` and the line
separators escaped, so no value can close the block. The Content-Security-Policy runs only our
script and applies only our style sheet, each allowed by its SHA-256, and no base URL or form.
Malformed values in the inputs are listed as notes, on the page and on their responses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import pathlib
from dataclasses import dataclass

from ..results import MetaEval
from . import groups_html as group_tables
from . import plots, reliability
from .drilldown import esc, num, response, video_source
from .rundata import METRICS, PROBLEM_LABELS, PROBLEMS, Cell, Source, finite, interval, metric
from .scan import load

METRIC_LABELS = {
    "qa_accuracy": "accuracy",
    "coverage": "coverage",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "murgat_s": "MURGAT-S",
}
PLOTS = (
    ("accuracy-vs-murgat", "Accuracy vs MURGAT-S per model and strategy (95% intervals)"),
    ("coverage-vs-f1", "Coverage vs attribution F1 (95% intervals)"),
    ("murgat-distribution", "Distribution of per-response MURGAT-S"),
    ("citation-problems", "Citation problems per modality"),
    ("hallucinated-audio", "Audio citations from models that heard no audio"),
    ("stages", "Judge calls, cache hits and throughput per stage"),
)


@dataclass
class ReportResult:
    path: pathlib.Path
    cells: int
    responses: int
    shown: int
    notes: int = 0  # malformed or missing values in the inputs, listed on the page


def json_for_script(obj) -> str:
    """JSON that cannot end its <script> element or start a comment or a tag."""
    text = json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _metric_cell(cell: Cell, name: str) -> str:
    value = metric(cell.summary, name)
    v = finite(value)
    ci = interval(metric(cell.summary, f"{name}_ci"))
    attrs = f' data-metric="{name}"'
    if v is not None:
        attrs += f' data-value="{json.dumps(value)}"'
    text = num(v)
    if ci is not None:
        attrs += f' data-ci-low="{json.dumps(ci[0])}" data-ci-high="{json.dumps(ci[1])}"'
        text += f' <span class="ci">[{num(ci[0])}, {num(ci[1])}]</span>'
    else:
        note = cell.summary.ci_note(name)  # per metric: only those with a note
        text += f' <span class="ci" title="{esc(note or "no interval")}">[–]</span>'
    return f'<td class="num"{attrs}>{text}</td>'


def _count(cell: Cell, key: str) -> str:
    v = metric(cell.summary, key)
    return f'<td class="num" data-metric="{key}">{esc(v) if v is not None and v >= 0 else "-"}</td>'


def judges_text(judges: dict[str, str]) -> str:
    """`oracle (every stage)`, or each judge after the stages it judged, in the protocol's order."""
    if not judges:
        return "-"
    order = plots.stage_order(judges)
    models = list(dict.fromkeys(judges[s] for s in order))
    if len(models) == 1:
        return f"{models[0]} (every stage)"
    return " · ".join(f"{', '.join(s for s in order if judges[s] == m)}: {m}" for m in models)


def summary_table(cells: list[Cell]) -> str:
    head = "".join(f"<th>{METRIC_LABELS[m]}</th>" for m in METRICS)
    rows = []
    for i, c in enumerate(cells):
        where = f'data-summary="{esc(str(c.summary_path))}" data-summary-key="{esc(json.dumps(list(c.summary_key)))}"'
        rows.append(
            f'<tr data-cell="{i}" {where}><td class="run" title="{esc(c.run)}">{esc(c.run_name)}</td>'
            f'<td class="judges">{esc(judges_text(c.judges))}</td>'
            f"<td>{esc(c.model)}</td><td>{esc(c.strategy)}</td>"
            f"{_count(c, 'responses')}{_count(c, 'scored')}{_count(c, 'errors')}"
            + "".join(_metric_cell(c, m) for m in METRICS)
            + "</tr>"
        )
    return (
        f'<table id="summary-table"><thead><tr><th>run</th><th>judges per stage</th><th>model</th>'
        f"<th>strategy</th><th>responses</th><th>scored</th><th>errors</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def problems_table(cells: list[Cell]) -> str:
    head = "".join(f"<th>{PROBLEM_LABELS[p]}</th>" for p in PROBLEMS)
    rows = []
    for c in cells:
        total = sum(c.citations.values())
        by = {p: sum(n for (m, v), n in c.citations.items() if v == p) for p in PROBLEMS}
        audio = (
            f"{c.hallucinated_audio} ({c.deaf_responses} responses heard none)"
            if c.heard_known
            else "unknown (no generation rows)"
        )
        visual = (
            f"{c.hallucinated_visual} ({c.blind_responses} responses saw none)"
            if c.heard_known
            else "unknown (no generation rows)"
        )
        rows.append(
            f"<tr><td>{esc(c.label)}</td><td class=num>{total}</td>"
            + "".join(f"<td class=num>{by[p]}</td>" for p in PROBLEMS)
            + f"<td>{esc(audio)}</td><td>{esc(visual)}</td></tr>"
        )
    return (
        f'<table id="problems-table"><thead><tr><th>model / strategy</th><th>citations</th>{head}'
        f"<th>audio citations without audio</th><th>visual citations without pictures</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def stages_table(sources: list[Source]) -> str:
    rows = "".join(
        f'<tr data-run="{esc(run)}" data-stage="{esc(name)}"><td>{esc(run)}</td><td>{esc(name)}</td>'
        f"<td class=num>{t['calls']:g}</td><td class=num>{t['model_calls']:g}</td>"
        f"<td class=num>{t['cache_hits']:g}</td>"
        f"<td class=num>{t['wall_s']:.2f}</td><td class=num>{num(plots.throughput(t), 1)}</td></tr>"
        for run, totals in plots.run_stage_totals(sources).items()
        for name, t in ((n, totals[n]) for n in plots.stage_order(totals))
    )
    return (
        '<table id="stages-table"><thead><tr><th>run</th><th>stage</th><th>calls</th><th>model calls</th>'
        "<th>cache hits</th><th>wall s</th><th>model calls / s</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def notes_list(sources: list[Source]) -> str:
    notes = [n for s in sources for n in s.notes]
    if not notes:
        return ""
    return (
        f'<h2>Notes on the inputs</h2><p class="meta">{len(notes)} notes: the files, lines and values '
        "named here could not be read or drawn and were read as missing; the rest of the report "
        "stands.</p>"
        f'<ul id="input-notes">{"".join(f"<li>{esc(n)}</li>" for n in notes)}</ul>'
    )


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 7px;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}.ci{color:#777;font-size:.8em;display:block}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1em}
figure{margin:0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.9em;color:#555}
details.response{border:1px solid #ddd;border-radius:4px;margin:.4em 0;padding:.3em .6em}
details.response>summary{cursor:pointer}.rid{font-family:monospace}
.cite{display:inline-block;font-family:monospace;border-radius:3px;padding:0 4px;margin:1px;border:1px solid #aaa}
.cite[data-start]{cursor:pointer}.v-supported{background:#c8f0c8}.v-unsupported{background:#f7c6c6}
.v-unjudged{background:#eee}.v-malformed,.v-out_of_range,.v-silent_audio,.v-no_stream{background:#ffe2a8;text-decoration:line-through}
.cite.active{outline:2px solid #1f77b4}.v-yes{color:#176b17;font-weight:bold}.v-no{color:#a11;font-weight:bold}.v-none{color:#777}
.sentence{margin:.4em 0}.sentence.plain .stext{color:#666}.facts{margin:.2em 0}.mark{font-family:monospace;font-size:.85em}
.raws summary{font-size:.85em;color:#555;cursor:pointer}pre{white-space:pre-wrap;background:#f7f7f7;padding:4px;margin:2px 0;max-height:20em;overflow:auto}
.raw-label{font-size:.8em;color:#555}.error,.unscored{color:#a11}.meta,.note,.novideo{color:#666;font-size:.9em}
.player video{max-width:480px;max-height:270px;display:block;background:#000}.legend span{margin-right:.6em}
.judges{font-size:.85em}#input-notes,.data-notes{color:#8a4b00;font-size:.9em}
"""

SCRIPT = """
(function(){
  'use strict';
  function label(t){var m=Math.floor(t/60),s=Math.floor(t%60);return m+':'+(s<10?'0':'')+s;}
  function seek(chip){
    var box=chip.closest('details.response'); if(!box) return;
    var video=box.querySelector('video'); if(!video) return;
    var start=parseFloat(chip.dataset.start), end=parseFloat(chip.dataset.end);
    if(!isFinite(start)) return;
    if(!(end>start)) end=start+1;  // a point citation: play one second
    var active=box.querySelector('.cite.active');
    if(active===chip && !video.paused){video.pause(); return;}
    if(active) active.classList.remove('active');
    chip.classList.add('active');
    video.dataset.stopAt=String(end);
    var out=box.querySelector('output.now');
    if(out) out.textContent='playing '+label(start)+'-'+label(end)+' ('+chip.textContent+')';
    function go(){video.currentTime=start; var p=video.play(); if(p&&p.catch) p.catch(function(){});}
    if(video.readyState>=1){go();}
    else{video.addEventListener('loadedmetadata',go,{once:true}); video.preload='metadata'; video.load();}
  }
  document.addEventListener('click',function(e){
    var chip=e.target.closest && e.target.closest('.cite[data-start]'); if(chip){seek(chip);}
  });
  document.addEventListener('keydown',function(e){
    if((e.key==='Enter'||e.key===' ')&&e.target.matches&&e.target.matches('.cite[data-start]')){e.preventDefault();seek(e.target);}
  });
  document.querySelectorAll('details.response video').forEach(function(v){
    v.addEventListener('timeupdate',function(){
      var stop=parseFloat(v.dataset.stopAt);
      if(isFinite(stop)&&v.currentTime>=stop){v.pause(); delete v.dataset.stopAt;}
    });
  });
})();
"""


def _sha256(text: str) -> str:
    return (
        "'sha256-"
        + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
        + "'"
    )


# No network source; our one script and one style sheet by their hashes (nothing injected can
# run or restyle), no <base> to move relative links, no form to send anything anywhere.
CSP = (
    f"default-src 'none'; img-src data:; media-src 'self' file: data: blob:; style-src {_sha256(STYLE)}; "
    f"script-src {_sha256(SCRIPT)}; base-uri 'none'; form-action 'none'"
)


def build(
    folders: list[pathlib.Path],
    out: pathlib.Path,
    *,
    media_root: pathlib.Path | None = None,
    max_responses: int = 300,
    relative_media: bool = False,
    group_by: tuple[str, ...] = (),
    meta_eval: MetaEval | None = None,
) -> ReportResult:
    """`meta_eval`: a `murgat meta-eval` meta_eval.json, read: its reliability diagrams are shown."""
    cells, sources = load(folders, max_responses)
    table = [c for c in cells if c.in_table]
    figures = {key: plots.png(fig) for key, fig in plots.figures(table, sources).items()}
    root = media_root.resolve() if media_root is not None else None
    out_dir = out.parent
    total = sum(c.records for c in cells)
    parts, n = [], 0
    for c in cells:
        for record, gen in c.shown:
            src, why = video_source(root, record.video, out_dir, relative_media)
            parts.append(response(record, gen, c, n, src, why))
            n += 1
    data = {
        "inputs": [str(f) for f in folders],
        "table": [
            {
                "run": c.run_name,
                "judges": c.judges,
                "model": c.model,
                "strategy": c.strategy,
                "summary": str(c.summary_path),
                "summary_key": list(c.summary_key),
                **{m: metric(c.summary, m) for m in METRICS},
                **{f"{m}_ci": metric(c.summary, f"{m}_ci") for m in METRICS},
            }
            for c in table
        ],
        "plots": [p for p, _ in PLOTS],
        "drilldown": {"shown": n, "total": total, "max_responses": max_responses},
    }
    by_group = group_tables.by_group(sources, group_by) if group_by else {}
    if group_by:
        data["by_group"] = group_tables.data(table, by_group)
    figs = "".join(
        f'<figure><img id="plot-{key}" class="plot" alt="{esc(caption)}" src="{_data_uri(figures[key])}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
        for key, caption in PLOTS
    )
    capped = (
        f"Showing {n} of {total} responses: the first ones of each model × strategy, "
        f"{max_responses} in all split evenly (--max-responses {max_responses}; raise it for more)."
        if n < total
        else f"All {total} responses."
    )
    media_note = (
        "Click a citation to play its span in the response's video; click it again to pause."
        if root is not None
        else "No --media-root given: no video players."
    )
    legend = " ".join(
        f'<span class="cite v-{v}">{esc(t)}</span>'
        for v, t in (
            ("supported", "supports a fact"),
            ("unsupported", "supports no fact"),
            ("unjudged", "not judged"),
            ("malformed", "unusable"),
        )
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MURGAT report</title><style>{STYLE}</style></head>
<body>
<h1>MURGAT report</h1>
<p class="meta">Inputs: {", ".join(f"<code>{esc(f)}</code>" for f in folders)} · {len(table)} model × strategy · {total} responses.
Means over responses; brackets are the 95% bootstrap intervals recorded in each summary.json.</p>
{notes_list(sources)}
<h2>Summary</h2>
{summary_table(table)}
{group_tables.section(table, by_group, group_by, METRIC_LABELS) if group_by else ""}
<h2>Plots</h2>
<div class="plots">{figs}</div>
{reliability.section(meta_eval, _data_uri) if meta_eval is not None else ""}
<h2>Citation problems</h2>
<p class="meta">Unusable citations are malformed (no parseable time or modality), out of range (past the
video's end), audio on a video without an audio track, or name a missing stream; an unsupported citation
is usable but was needed for none of its sentence's facts.</p>
{problems_table(cells)}
<h2>Judge calls per stage</h2>
{stages_table(sources)}
<h2>Responses</h2>
<p id="drilldown-note">{esc(capped)} {esc(media_note)}</p>
<p class="legend">{legend}</p>
<div id="drilldown">{"".join(parts)}</div>
<script type="application/json" id="report-data">{json_for_script(data)}</script>
<script>{SCRIPT}</script>
</body></html>
"""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return ReportResult(out, len(table), total, n, sum(len(s.notes) for s in sources))
