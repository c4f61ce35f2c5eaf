"""The commands' tables in an 80-column pipe (a CI log, `| tee`): row names stay whole, a name too long wraps whole in its column, cells from a model are text, never markup."""

import re

from support.tables import shown

from murgat_local.reports import table as tables
from murgat_local.results import GenerationSummary, MetaEval, RunSummary, Summary

LONG = "an-evaluated-model-with-a-name-far-longer-than-any-column-could-hold"  # 68 characters


_COUNTS = {"responses": 120, "scored": 114, "errors": 6, "partial": 3}


_SCORES = {
    "coverage": 0.5,
    "precision": 0.25,
    "recall": 0.125,
    "f1": 0.2,
    "murgat_s": 0.1,
    "qa_accuracy": 0.75,
}


def whole(name: str, lines: list[str]) -> bool:
    """`name` stands whole in a cell: bounded by the start or end of the line, spaces or rules."""
    return any(re.search(rf"(^|[\s│┃]){re.escape(name)}($|[\s│┃])", line) for line in lines)


def folded(name: str, lines: list[str]) -> bool:
    """`name`, wrapped in the first column: its pieces start consecutive lines, in order."""
    starts = [line.lstrip(" │┃").split(" ")[0] for line in lines]
    return any(
        name == "".join(starts[i:j])
        for i in range(len(starts))
        for j in range(i + 1, len(starts) + 1)
    )


def summary(names=("sample-model-a", "sample-model-b")) -> Summary:
    one = {**_COUNTS, **_SCORES}
    return Summary.model_validate(
        {
            **one,
            "mode": "default",
            "by_model": {n: dict(one) for n in names},
            "models": {
                "decontext": "smollm2-135m-instruct",
                "verifiable": "smollm2-135m-instruct",
                "decompose": "smollm2-135m-instruct",
                "entail": "tiny-qwen3-omni",
            },
            "stages": {
                s: {
                    "calls": 1520,
                    "unique": 1480,
                    "cache_hits": 40,
                    "model_calls": 1480,
                    "unparsed": 12,
                    "errors": 3,
                    "wall_s": 1234.5,
                }
                for s in ("decontext", "verifiable", "decompose", "entail")
            },
        }
    )


def test_score_tables_keep_row_names_whole_at_80_columns():
    s = summary()
    lines = shown(tables.summary_table(s))
    for name in ("sample-model-a", "sample-model-b", "all", "MURGAT-S", "0.100", "partial", "114"):
        assert whole(name, lines), (name, "\n".join(lines))
    lines = shown(tables.stages_table(s))
    for name in (
        "decontext",
        "verifiable",
        "decompose",
        "entail",
        "smollm2-135m-instruct",
        "tiny-qwen3-omni",
        "unparsed",
        "refused",
        "1234.5",
    ):
        assert whole(name, lines), (name, "\n".join(lines))
    lines = shown(
        tables.errors_table(
            Summary(
                errors_list=[
                    {
                        "index": 3,
                        "id": "colors-wrong-time",
                        "source": "responses.jsonl line 4",
                        "error": "video colors not found under /work/main/.local/sample_media " * 2,
                    }
                ]
            )
        )
    )
    assert whole("colors-wrong-time", lines), "\n".join(lines)
    assert "not found" in " ".join(lines)


def test_a_name_too_long_for_the_width_wraps_whole_in_its_column():
    lines = shown(tables.summary_table(summary(("sample-model-a", LONG))))
    assert whole("sample-model-a", lines) and whole("all", lines) and whole("MURGAT-S", lines)
    assert folded(LONG, lines), "\n".join(lines)


def test_generation_run_meta_and_smoke_tables_keep_row_names_whole_at_80_columns():
    labels = ["smollm2-135m-instruct/cite", "tiny-qwen3-omni/posthoc:cite", "tiny-gemma3/base"]
    cell = {
        "rows": 120,
        "errors": 2,
        "graded": 118,
        "answered": 110,
        "unanswered": 8,
        "accuracy": 0.425,
        "answer_paths": {"letter": 100, "judge": 10},
    }
    gen = {"cells": {l: dict(cell) for l in labels}, "reasoning_tax": {"tiny-gemma3": -0.05}}
    lines = shown(tables.generation_table(GenerationSummary.model_validate(gen)))
    assert all(whole(l, lines) for l in labels), "\n".join(lines)
    grid = {
        "grid": {
            l: {
                **cell,
                "coverage": 0.5,
                "precision": 0.25,
                "recall": 0.125,
                "murgat_s": 0.1,
                "partial": 3,
            }
            for l in labels
        },
        "reasoning_tax": {},
    }
    lines = shown(
        tables.grid_table(RunSummary.model_validate(grid))
    )  # nine columns of values: the longer labels wrap, whole
    assert whole("tiny-gemma3/base", lines) and whole("MURGAT-S", lines), "\n".join(lines)
    assert all(folded(l, lines) for l in labels[:2]), "\n".join(lines)

    stats = {
        "subtask1": {"balanced_accuracy": 0.61},
        "subtask2": {"f1": 0.52},
        "subtask3": {"balanced_accuracy": 0.7},
        "murgat_s": {"pearson": -0.123, "pearson_ci": [-0.456, 0.789], "n": 120},
    }
    runs = ["judge-qwen3-omni-30b-instruct", "judge-gemma-3-27b-it"]
    report = {
        "runs": dict.fromkeys(runs, stats),
        "best": {"subtask1": runs[0], "murgat_s": runs[1]},
        "inter_annotator": stats,
    }
    lines = shown(tables.meta_table(MetaEval.model_validate(report)))
    assert (
        whole(runs[1], lines)
        and whole("(annotator 2 vs 1)", lines)
        and whole("[-0.46, 0.79]", lines)
    )
    assert folded(runs[0], lines), "\n".join(lines)

    rows = [
        {
            "model": m,
            "modality": mod,
            "verdict": "NO",
            "raw": '{"label":"NO"} ' * 8,
            "prompt_tokens": 1234,
            "output_tokens": 11,
        }
        for m in ("tiny-qwen3-omni", "smollm2-135m-instruct")
        for mod in ("text", "image", "video", "audio")
    ]
    lines = shown(tables.smoke_table(rows, "vllm"))
    for name in ("tiny-qwen3-omni", "smollm2-135m-instruct", "image", "video", "audio", "1234/11"):
        assert whole(name, lines), (name, "\n".join(lines))


def test_group_and_preset_tables_keep_their_names_whole_at_80_columns():
    from murgat_local.engines import available_presets, load_preset
    from murgat_local.reports.groups_terminal import terminal_tables

    one = {**_COUNTS, **_SCORES}
    groups = {
        "by_group": {
            "task_type": {"temporal localization": one, "Audio Recognition": one, "(none)": one},
            "[bold]markup[/bold]": {"x": one},
        }
    }
    first, second = terminal_tables(Summary.model_validate(groups))
    lines = shown(first)
    for name in ("temporal localization", "Audio Recognition", "(none)", "MURGAT-S"):
        assert whole(name, lines) or folded(name.replace(" ", ""), lines), (name, "\n".join(lines))
    assert any(
        "[bold]markup[/bold]" in line for line in shown(second)
    )  # shown as written, never markup
    presets = [load_preset(n) for n in available_presets()]
    lines = shown(tables.presets_table(presets))
    for p in presets:
        assert whole(p.name, lines) or folded(p.name, lines), (p.name, "\n".join(lines))


def test_a_table_that_fits_keeps_its_full_frame():
    lines = shown(tables.summary_table(summary()), width=200)
    assert lines[1].startswith("┏") and whole("sample-model-a", lines)


def test_table_cells_from_a_model_are_text_never_markup():
    rows = [
        {
            "model": "m",
            "modality": "text",
            "verdict": None,
            "raw": "[red]boom[/red] \x1b[2J",
            "prompt_tokens": 1,
            "output_tokens": 1,
        }
    ]
    out = "\n".join(shown(tables.smoke_table(rows, "vllm"), width=200))
    assert "[red]boom[/red]" in out and "\\x1b[2J" in out
