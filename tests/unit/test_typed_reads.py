"""Records and summaries are read as typed objects: outside `results/`, the packages that consume
what murgat writes read attributes, never `.get(` on record data. Each `.get(` left in them reads
something that is not a record (a configuration table, an HTTP request, an input row before it
is a record, a dict the code itself is building) and is listed here with why: a new one fails
this test until it is either typed or listed with its reason."""

from __future__ import annotations

import ast
import pathlib

import murgat_local

PACKAGE = pathlib.Path(murgat_local.__file__).parent
CONSUMERS = ("pipeline", "reports", "meta", "metrics", "annotate", "jobs", "cli")

# path under murgat_local -> (how many `.get(` calls, what they read)
ALLOWED: dict[str, tuple[int, str]] = {
    "pipeline/composite.py": (1, "an engine holder's get() (starts the engine)"),
    "pipeline/dryrun.py": (
        3,
        "the dry run's own plan and calibration dicts; an engine holder's get()",
    ),
    "pipeline/generate_rows.py": (
        4,
        "the dataset row being answered (before it is a record); a local table",
    ),
    "pipeline/generating.py": (
        3,
        "the from-file texts and a local table; a refused row's names, to keep on its error record",
    ),
    "pipeline/judge_warnings.py": (1, "the stage -> model table of the configuration"),
    "pipeline/judging.py": (
        3,
        "counters being folded; an engine holder's get(); a cache row's JSON column",
    ),
    "pipeline/outputs.py": (1, "an errno -> reason table"),
    "pipeline/panel.py": (2, "an in-process panel vote; an engine holder's get()"),
    "pipeline/program_run.py": (2, "the program interpreter's record as it built it, in process"),
    "pipeline/protocol.py": (
        2,
        "the input row (decontextualized_text); a fact's in-process verdicts by index",
    ),
    "pipeline/records.py": (
        20,
        "the input row of the responses file, and the reference's own scored JSON (`rescore` of its format)",
    ),
    "pipeline/routing.py": (2, "the input row; the routes table"),
    "pipeline/segment_view.py": (1, "the input row (decontextualized_text)"),
    "reports/drilldown.py": (1, "the report's own verdict -> text table"),
    "reports/fit_table.py": (6, "rich's Measurement.get and local width tables"),
    "reports/groups_html.py": (4, "groups being computed for the page, and a label table"),
    "reports/paper_table.py": (1, "the reasoning taxes being tabled (a local dict)"),
    "reports/plots.py": (4, "colour, marker and total tables of the plot"),
    "reports/reach_probe.py": (
        5,
        "the reach probe's rows (`murgat models --reach`), not a record file",
    ),
    "reports/reliability.py": (2, "a stage -> label table"),
    "reports/rundata.py": (3, "the report's cells by model"),
    "reports/scan.py": (2, "local tables joining generation rows to score records"),
    "reports/table.py": (1, "rich's task fields"),
    "meta/agreement.py": (
        4,
        "ResponseView scores (meta's own view) and correlation results being built",
    ),
    "meta/calibrate.py": (2, "ResponseView scores (meta's own view)"),
    "meta/escalation.py": (7, "the certification blocks meta-eval is building, and its own tables"),
    "meta/meta_eval.py": (4, "agreement results and selection rows being built"),
    "meta/select.py": (
        9,
        "agreement results being ranked, a run's judge table, the stored configuration (a RunConfig dump)",
    ),
    "metrics/intervals.py": (4, "the summary being built, before it is written"),
    "annotate/agreement.py": (1, "label views by annotator"),
    "annotate/all_answers.py": (1, "items by id"),
    "annotate/export.py": (7, "the answers people gave (the page's own state) and a labels line"),
    "annotate/questions.py": (6, "the answers people gave"),
    "annotate/server.py": (
        15,
        "HTTP headers, cookies and query parameters; FastAPI's app.get routes",
    ),
    "annotate/session.py": (6, "items and counts by id"),
    "annotate/session_page.py": (2, "a media-info cache and the answers people gave"),
    "annotate/source.py": (1, "the run's records by id (a local dict of typed records)"),
    "cli/annotate.py": (1, "the environment"),
    "cli/model_checks.py": (1, "the GPU table"),
    "cli/options.py": (1, "the option declarations per command"),
    "cli/options_build.py": (3, "the overrides being built and type hints"),
    "cli/schema.py": (1, "the schema names table"),
    "cli/serve.py": (1, "the environment"),
    "cli/tools.py": (2, "`murgat smoke` rows, not a record file"),
}


def _gets(path: pathlib.Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
    ]


def _found() -> dict[str, list[int]]:
    out = {}
    for package in CONSUMERS:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            lines = _gets(path)
            if lines:
                out[str(path.relative_to(PACKAGE))] = lines
    return out


def test_no_get_on_record_data_outside_results():
    found = _found()
    unlisted = {p: lines for p, lines in found.items() if p not in ALLOWED}
    assert not unlisted, f"`.get(` where records are read (type the read, or list it): {unlisted}"
    changed = {
        p: (len(found.get(p, [])), n) for p, (n, _) in ALLOWED.items() if len(found.get(p, [])) != n
    }
    assert not changed, f"(found, listed) `.get(` calls differ: update the list: {changed}"


def test_the_readers_hand_out_models():
    """The readers in `results/` return models; no consumer turns one back into a dict to read
    it (`.dump()` / `model_dump()` are for writing)."""
    dumped = {}
    for package in CONSUMERS:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for n, line in enumerate(text.splitlines(), 1):
                if ".dump()" in line or "model_dump(" in line:
                    dumped.setdefault(str(path.relative_to(PACKAGE)), []).append(n)
    assert set(dumped) <= WRITERS, {p: v for p, v in dumped.items() if p not in WRITERS}


# Modules that dump a model only to write it (a file, an HTTP response) or to keep a
# configuration in provenance.
WRITERS = {
    "pipeline/records.py",  # a verdict's value, into the record being built
    "pipeline/generating.py",  # each generated row, written
    "pipeline/runner.py",  # each score record, written
    "pipeline/provenance.py",  # the run's configuration, into provenance
    "pipeline/generation_summary.py",  # the same, for a generation
    "reports/rescore.py",  # the rescored records, written (`--out`)
    "jobs/grid.py",  # a generation cell, into the run summary being built
    "cli/compare.py",  # the comparison, written (`--out`)
}
