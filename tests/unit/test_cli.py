"""The command line without models: usage errors, `segment`, `rescore` of reference files, and
the tables as an 80-column pipe shows them."""

import json
import re

import pytest
from support.paths import ROOT
from support.tables import shown
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.reports import table as tables

runner = CliRunner()


def said(r) -> str:
    return " ".join(r.output.split())  # rich wraps long lines


def test_usage_errors_exit_2(tmp_path, media_root):
    r = runner.invoke(
        app,
        [
            "score",
            str(tmp_path / "none.jsonl"),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 2 and "does not exist" in said(r)
    f = tmp_path / "r.jsonl"
    f.write_text("{}\n")
    r = runner.invoke(
        app,
        [
            "score",
            str(f),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path),
            "--compat",
            "other",
        ],
    )
    assert r.exit_code == 2
    r = runner.invoke(
        app,
        [
            "score",
            str(f),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path),
            "--judge",
            "no-such-model",
        ],
    )
    assert r.exit_code == 2 and "neither a preset" in said(r)
    r = runner.invoke(
        app,
        [
            "score",
            str(f),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path),
            "--judge",
            "tiny-qwen3-omni",
            "--models-dir",
            str(tmp_path / "empty"),
        ],
    )
    assert r.exit_code == 2 and "tiny-qwen3-omni" in r.output and "does not exist" in said(r)


def test_segment_prints_sentences_and_citations(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(
        json.dumps(
            {
                "id": "a",
                "video": "v",
                "model_generation": "Reasoning: Dr. Lee waves (visual, 0:12.5). So B.\nAnswer: B",
            }
        )
        + "\n{bad\n"
    )
    r = runner.invoke(app, ["segment", str(f)])
    assert r.exit_code == 0
    first, second = [json.loads(l) for l in r.output.splitlines()]
    assert [s["text"] for s in first["sentences"]] == ["Dr. Lee waves (visual, 0:12.5).", "So B."]
    assert first["sentences"][0]["citations"][0]["start"] == 12.5 and first["answer"] == "B"
    assert "line 2" in second["error"]
    # --compat reference judges the generation as written, as the reference's run_metric.py
    # does; --parse-reasoning, as its --parse_reasoning, the reasoning it extracts.
    r = runner.invoke(app, ["segment", str(f), "--compat", "reference"])
    ref = json.loads(r.output.splitlines()[0])
    assert ref["text_from"] == "generation" and ref["rewrite"] == "text"
    assert [s["text"] for s in ref["sentences"]] == [
        "Reasoning: Dr.",
        "Lee waves (visual, 0:12.5).",
        "So B.",
        "Answer: B",
    ]
    r = runner.invoke(
        app,
        ["segment", str(f), "--compat", "reference", "--parse-reasoning", "--no-decontextualize"],
    )
    ref = json.loads(r.output.splitlines()[0])
    assert ref["text_from"] == "reasoning" and ref["rewrite"] is None
    assert ref["sentences"][0]["text"] == "Dr." and ref["sentences"][1]["citations"] == []


def test_segment_takes_the_scorers_options_and_checks_them_as_it_does(tmp_path):
    f = tmp_path / "r.jsonl"
    rows = [
        {
            "id": str(i),
            "video": "v",
            "model_generation": f"<think>hm.</think>Reasoning: A dog {i}.\nAnswer: A",
            "decontextualized_text": "The dog barks (audio, 0:01).",
        }
        for i in range(3)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = runner.invoke(app, ["segment", str(f), "--parse-reasoning"])
    assert r.exit_code == 2 and "compat" in said(r)
    r = runner.invoke(app, ["segment", str(f), "--compat", "other"])
    assert r.exit_code == 2 and "--compat takes 'reference'" in said(r)
    # default mode: the input's decontextualized_text is not used; reference mode splits it
    r = runner.invoke(app, ["segment", str(f), "--limit", "2"])
    recs = [json.loads(l) for l in r.output.splitlines()]
    assert (
        len(recs) == 2 and recs[0]["text_from"] == "reasoning" and recs[0]["rewrite"] == "sentences"
    )
    assert [s["text"] for s in recs[0]["sentences"]] == ["A dog 0."]
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        'compat = "reference"\nparse_reasoning = true\ndecontextualize = false\nlimit = 1\n'
    )
    r = runner.invoke(app, ["segment", str(f), "--config", str(cfg)])
    (rec,) = [json.loads(l) for l in r.output.splitlines()]
    assert (
        rec["mode"] == "reference"
        and rec["text_from"] == "decontextualized_text"
        and rec["rewrite"] is None
    )
    assert [s["claim"] for s in rec["sentences"]] == ["The dog barks."]
    cfg.write_text('compat = "reference"\nnot_a_setting = 1\n')
    r = runner.invoke(app, ["segment", str(f), "--config", str(cfg)])
    assert r.exit_code == 2 and "bad configuration" in said(r)


def test_rescore_reads_the_reference_scored_format(tmp_path):
    entry = {
        "id": "x",
        "video": "v",
        "evaluations": {
            "A man waves (visual, 0:01).": {
                "verification_worthy": {"prediction": True},
                "atomic_facts": [
                    {
                        "fact": "A man waves (visual, 0:01).",
                        "scores": {
                            "precision": 1.0,
                            "recall": 1.0,
                            "citation_judgments": {"(visual, 0:01)": True},
                        },
                    },
                    {
                        "fact": "A man is present (visual, 0:09).",
                        "scores": {
                            "precision": None,
                            "recall": None,
                            "citation_judgments": {"(visual, 0:09)": None},
                        },
                    },
                ],
            },
            "He smiles (visual, 0:02; audio, 0:02).": {
                "verification_worthy": {"prediction": True},
                "atomic_facts": [
                    {
                        "fact": "He smiles.",
                        "scores": {
                            "precision": 0.5,
                            "recall": 0.0,
                            "citation_judgments": {"(visual, 0:02)": True, "(audio, 0:02)": False},
                        },
                    }
                ],
            },
            "A dog sits.": {
                "verification_worthy": {"prediction": True},
                "atomic_facts": [
                    {
                        "fact": "A dog sits.",
                        "scores": {"precision": 0.0, "recall": 0.0, "citation_judgments": {}},
                    }
                ],
            },
            "So A.": {"verification_worthy": {"prediction": False}},
        },
    }
    f = tmp_path / "scored.json"
    f.write_text(json.dumps([entry]))
    out = tmp_path / "re.jsonl"
    r = runner.invoke(app, ["rescore", str(f), "--out", str(out)])
    assert r.exit_code == 0, r.output
    (rec,) = [json.loads(l) for l in out.read_text().splitlines()]
    # coverage 2/3; pools: precision [1.0, 0.5], recall [1.0, 0.0]
    assert rec["coverage"] == 2 / 3 and rec["precision"] == 0.75 and rec["recall"] == 0.5
    assert abs(rec["murgat_s"] - 2 / 3 * 0.6) < 1e-12


# ---------------------------------------------------------------- tables in an 80-column pipe

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


def summary(names=("sample-model-a", "sample-model-b")) -> dict:
    one = {**_COUNTS, **_SCORES}
    return {
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
            [
                {
                    "index": 3,
                    "id": "colors-wrong-time",
                    "source": "responses.jsonl line 4",
                    "error": "video colors not found under /work/main/.local/sample_media " * 2,
                }
            ]
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
    lines = shown(tables.generation_table(gen))
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
    lines = shown(tables.grid_table(grid))  # nine columns of values: the longer labels wrap, whole
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
    lines = shown(tables.meta_table(report))
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
    first, second = terminal_tables(groups)
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


@pytest.mark.parametrize(
    "flags, key",
    [
        (["--temperature", "99"], "temperature"),
        (["--max-tokens", "-5"], "max_tokens"),
        (["--top-p", "0"], "top_p"),
        (["--top-k", "-1"], "top_k"),
        (["--limit", "-1"], "limit"),
        (["--samples", "0"], "samples"),
    ],
)
def test_generate_flags_are_validated_as_their_toml_keys(tmp_path, media_root, flags, key):
    """A flag is an override of the typed configuration, refused before any model starts
    (exit 2) exactly as the same key in a TOML file is, naming the key. The model named does not
    exist: were the flag let through, the run would stop later on the model instead."""
    questions = ROOT / "samples" / "questions.jsonl"
    r = runner.invoke(
        app,
        [
            "generate",
            str(questions),
            "--media-root",
            str(media_root),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--model",
            "no-such-model",
            *flags,
        ],
    )
    assert r.exit_code == 2, r.output
    assert "bad configuration" in said(r) and key in said(r), r.output
