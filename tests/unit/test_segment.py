"""`murgat segment` prints what `murgat score` judges, under every option that changes it.

Both call `text.segment.segment`; these tests hold them to it from the outside: the sentences,
the claims the judges read and the citations that `segment` prints for a varied set of
generations are those in the records of a real scoring run (the `Runner`, the protocol, real
media, a deterministic rule-based judge), for default mode and for `--compat reference` with and
without `--parse-reasoning` and decontextualization.

Only a model's whole-text rewrite (reference mode, decontextualizing, no `decontextualized_text`
in the input) cannot be printed ahead: `segment` says so (`"rewrite": "text"`), and the scorer
splits the rewrite exactly as `segment` splits an input's own `decontextualized_text`.
"""

from __future__ import annotations

import json

import pytest
from support.fakes import OracleEngine, fenced
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.text.segment import segment

GENERATIONS = [
    # thinking, "Reasoning:" / "Answer:" sections
    "<think>Let me look. The screen is red (visual, 0:00).</think>\nReasoning: The screen is red (visual, 0:00). "
    "The tone plays (audio, 0:00-0:01).\nAnswer: A",
    # markdown sections, \boxed{}, two citations in one group, an abbreviation
    "**Reasoning:** Dr. Lee points at the screen (visual, 0:01; visual, 0:02). So the answer is B.\n"
    "**Answer:** \\boxed{B}",
    # citations in the project's wider forms: brackets, spaced and upper-case, decimals, hours
    "The screen is green [visual, 0:01]. A tone sounds (AUDIO, 0:00 - 0:01). It lasts 3.5 s (visual, 0:01.5). "
    "Later it is blue (visual, 0:00:02).\nFinal Answer: \\boxed{\\text{C}}",
    # citations neither grammar can use, full-width brackets, a citation standing alone
    "A smell rises (smell, 0:10). The frame is red (visual, 99:99). It is green（visual, 0:01）. "
    "(visual, 0:02) Then blue (video: 0:02).\nAnswer: D",
    # a sentence repeated word for word (the reference counts it once)
    "The screen is red (visual, 0:00). The screen is red (visual, 0:00). Therefore A.\nAnswer: A",
    # a list under a bare "Reasoning:" line
    "Reasoning:\n- The screen is red (visual, 0:00).\n- The screen turns green (visual, 0:01).\n\nAnswer: A",
    # CJK punctuation, an unclosed thinking block after the answer
    "他看到红色（visual, 0:00）。然后是绿色 (visual, 0:01)。\nAnswer: B\n<think>not finished (visual, 0:03)",
    # no markers at all; a closing tag alone
    "</think> The screen is yellow (visual, 0:03). A tone sounds (audio, 0:03).",
]
GIVEN = (
    "The screen is green (visual, 0:01). It is bright (visual, 0:01). It is bright (visual, 0:01)."
)
ROWS = [
    {"id": f"g{i}", "video": "colors", "model_generation": g} for i, g in enumerate(GENERATIONS)
] + [
    # the input's own decontextualized_text: split as it is in reference mode, unused in default mode
    {
        "id": "given",
        "video": "colors",
        "model_generation": GENERATIONS[0],
        "decontextualized_text": GIVEN,
    },
    {
        "id": "blank-given",
        "video": "colors",
        "model_generation": GENERATIONS[1],
        "decontextualized_text": "  \n",
    },
]
# (compat, parse_reasoning, decontextualize)
MODES = [
    (None, False, True),
    (None, False, False),
    ("reference", False, True),
    ("reference", False, False),
    ("reference", True, True),
    ("reference", True, False),
]


def _flags(compat, parse_reasoning, decontextualize) -> list[str]:
    return (
        (["--compat", compat] if compat else [])
        + (["--parse-reasoning"] if parse_reasoning else [])
        + ([] if decontextualize else ["--no-decontextualize"])
    )


class Rewriter(OracleEngine):
    """The oracle, whose whole-text rewrite changes the text without touching a citation: the
    scorer must split the rewrite. (Its verdict grammar takes no line break, quote or backslash,
    and an engine drops a `<think>` block from any output, citations and all.)"""

    def _answer(self, req) -> str:
        if req.verdict.__name__ == "RewrittenText":
            text = fenced(req.prompt, "TEXT")
            for old, new in (("\n", " "), ("\\", ""), ('"', "'"), ("<", "‹"), (">", "›")):
                text = text.replace(old, new)
            return json.dumps(
                {"text": f"Seen: {text.strip()}"}, ensure_ascii=False, separators=(",", ":")
            )
        return super()._answer(req)


def _citation(c: dict) -> dict:
    return {k: c[k] for k in ("raw", "modality", "start", "end", "error")}


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    path = tmp_path_factory.mktemp("segment") / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


@pytest.mark.parametrize("compat,parse_reasoning,decontextualize", MODES)
def test_segment_prints_what_the_scorer_judges(
    tmp_path, media_root, responses, compat, parse_reasoning, decontextualize
):
    printed = CliRunner().invoke(
        app, ["segment", str(responses), *_flags(compat, parse_reasoning, decontextualize)]
    )
    assert printed.exit_code == 0, printed.output
    shown = [json.loads(line) for line in printed.output.splitlines()]

    config = RunConfig(
        judge="oracle",
        compat=compat,
        parse_reasoning=parse_reasoning,
        decontextualize=decontextualize,
    )
    runner = Runner(
        config, media_root, tmp_path / "out", engines={"oracle": Rewriter()}, summary=RunSummary
    )
    try:
        result = runner.run(responses)
    finally:
        runner.close()
    records = [json.loads(line) for line in result.records_path.read_text().splitlines()]

    assert [r["id"] for r in shown] == [r["id"] for r in records] == [r["id"] for r in ROWS]
    for seg, rec, row in zip(shown, records, ROWS):
        assert rec["status"] == "ok", rec["error"]
        trace = rec["trace"]
        judged = [
            (s["text"], s["judged_text"], [_citation(c) for c in s["citations"]])
            for s in trace["sentences"]
        ]
        assert seg["answer"] == rec["answer"]["predicted"] and seg["mode"] == rec["mode"], rec["id"]
        assert (seg["text_from"] == "decontextualized_text") == trace["text_given"], rec["id"]
        if seg["rewrite"] == "text":
            # split after the judge's rewrite, as `segment` splits a decontextualized_text
            assert trace["text_note"] is None, (rec["id"], trace["text_note"])
            rewrite = trace["text_decontext"]["value"]["text"]
            assert rewrite.startswith("Seen: ")
            expected = segment(
                row["model_generation"],
                compat=compat,
                parse_reasoning=parse_reasoning,
                decontextualized_text=rewrite,
            ).to_dict()["sentences"]
        else:
            assert trace["text_decontext"] is None, rec["id"]
            expected = seg["sentences"]
        assert [(s["text"], s["claim"], s["citations"]) for s in expected] == judged, rec["id"]
        # default mode's decontextualizer rewrites claims one by one (the oracle keeps them)
        rewritten = [s for s in trace["sentences"] if "decontext" in s]
        assert bool(rewritten) == (seg["rewrite"] == "sentences" and len(seg["sentences"]) > 1), (
            rec["id"]
        )


def test_what_each_invocation_judges():
    """The modes differ where the reference's run_metric.py differs: its default invocation splits
    the generation as written, its --parse_reasoning the reasoning; the default mode the
    reasoning by its own rules."""
    text = GENERATIONS[0]
    default = segment(text)
    whole = segment(text, compat="reference")
    flagged = segment(text, compat="reference", parse_reasoning=True)
    assert [s.text for s in default.sentences] == [
        "The screen is red (visual, 0:00).",
        "The tone plays (audio, 0:00-0:01).",
    ]
    assert [s.text for s in whole.sentences] == [
        "<think>Let me look.",
        "The screen is red (visual, 0:00).",
        "</think>\nReasoning: The screen is red (visual, 0:00).",
        "The tone plays (audio, 0:00-0:01).",
        "Answer: A",
    ]
    assert [s.text for s in flagged.sentences] == [s.text for s in default.sentences]
    assert (default.text_from, whole.text_from, flagged.text_from) == (
        "reasoning",
        "generation",
        "reasoning",
    )
    assert (
        whole.text == text
        and default.answer_letter == whole.answer_letter == flagged.answer_letter == "A"
    )

    given = segment(text, compat="reference", decontextualized_text=GIVEN)
    assert given.text_from == "decontextualized_text" and given.rewrite is None
    assert [s.text for s in given.sentences] == [
        "The screen is green (visual, 0:01).",
        "It is bright (visual, 0:01).",
    ]
    assert (
        segment(text, decontextualized_text=GIVEN).sentences == default.sentences
    )  # default mode: unused
    assert segment(text, compat="reference", decontextualized_text=" ").text_from == "generation"
    assert (
        segment(text, compat="reference", decontextualized_text=["not", "text"]).rewrite == "text"
    )
    with pytest.raises(ValueError, match="compat"):
        segment(text, parse_reasoning=True)
    with pytest.raises(ValueError, match="compat"):
        segment(text, compat="other")
