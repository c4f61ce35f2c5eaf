"""The command line without models: usage errors, `segment`, `rescore` of reference files, and
the tables as an 80-column pipe shows them."""

import json

import pytest
from support.paths import ROOT
from typer.testing import CliRunner

from murgat_local.cli import app

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
    assert r.exit_code == 2 and "--compat (key compat): input should be 'reference'" in said(r)
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
    assert r.exit_code == 2 and said(r) == f"error: {cfg}: key not_a_setting: unknown key, got 1"


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


@pytest.mark.parametrize(
    "flags, line",
    [
        (["--temperature", "99"], "--temperature (key sampling.temperature): must be >= 0 and <= 2, got 99.0"),
        (["--max-tokens", "-5"], "--max-tokens (key sampling.max_tokens): must be >= 1, got -5"),
        (["--top-p", "0"], "--top-p (key sampling.top_p): must be > 0 and <= 1, got 0.0"),
        (["--top-k", "-1"], "--top-k (key sampling.top_k): must be >= 0, got -1"),
        (["--limit", "-1"], "--limit (key limit): must be >= 1, got -1"),
        (["--samples", "0"], "--samples (key samples): must be >= 1 and <= 64, got 0"),
    ],
)  # fmt: skip
def test_generate_flags_are_validated_as_their_toml_keys(tmp_path, media_root, flags, line):
    """A flag is an override of the typed configuration, refused before any model starts
    (exit 2) exactly as the same key in a TOML file is: one line naming the flag, the key, the
    allowed range and the value. The model named does not exist: were the flag let through, the
    run would stop later on the model instead."""
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
    assert r.output.strip() == f"error: {line}", r.output


def test_score_names_the_flag_or_the_files_key_and_starts_no_engine(tmp_path, media_root):
    """`murgat score`: the same refusal for a flag and for a TOML file's key, before any engine
    starts (the judge does not exist: anything let through stops on it instead)."""
    f = tmp_path / "r.jsonl"
    f.write_text("{}\n")
    toml = tmp_path / "run.toml"
    toml.write_text("[sampling]\ntemperature = 99\n")
    common = ["score", str(f), "--media-root", str(media_root), "--out", str(tmp_path / "o")]
    r = runner.invoke(app, [*common, "--judge", "no-such-model", "--limit", "-1"])
    assert r.exit_code == 2 and said(r) == "error: --limit (key limit): must be >= 1, got -1"
    r = runner.invoke(app, [*common, "--judge", "no-such-model", "--config", str(toml)])
    assert r.exit_code == 2
    assert said(r) == f"error: {toml}: key sampling.temperature: must be >= 0 and <= 2, got 99"
    assert not (tmp_path / "o" / "engine.log").exists()
