"""Hostile text never crashes a writer nor loses a record, and text steps keep their outputs.

What happens to text that is not valid Unicode is decided where it is read: a lone UTF-16
surrogate (`"\\ud83d"` in the JSON) and a byte that is not UTF-8 both become U+FFFD, and the
item's `source` says how many were replaced. Every JSON writer goes through
`reports.jsonl.dumps_record`, which writes UTF-8 and replaces any lone surrogate that still
reaches it the same way. NUL, control and bidi characters are text: kept, and escaped by JSON;
terminal tables show them as visible escapes.
"""

from __future__ import annotations

import io
import json
import pathlib
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from support.fakes import OracleEngine
from typer.testing import CliRunner

from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.inputs.responses import InputError, read_responses
from murgat_local.jsonl import dumps_record
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.reports.table import errors_table, summary_table
from murgat_local.results import Summary
from murgat_local.text.segment import segment_response
from murgat_local.text.sentences import split_sentences, split_sentences_reference

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support" / "data"))
from make_segment_golden import digest, outputs

GOLDEN = pathlib.Path(__file__).parents[1] / "support" / "data" / "segment_golden.json"
# The issue's example, as it appears in the JSON text: an escaped lone high surrogate.
SURROGATE_LINE = '{"id": "a", "video": "v", "model_generation": "A \\ud83d b (visual, 0:01)."}'
GOOD_LINE = json.dumps({"id": "b", "video": "v", "model_generation": "It stops (visual, 0:02)."})
HOSTILE = [
    "NUL\x00inside (visual, 0:01).",
    "Bidi \u202eevil\u202c and \u2066isolate\u2069 (visual, 0:01).",
    "Esc \x1b[2J clears, bell \x07 rings (audio, 0:01).",
    "Zero\u200bwidth, BOM \ufeff, U+FFFF \uffff (visual, 0:01).",
    "Markup [/red] and [bold]x[/bold] (visual, 0:01).",
]


def _lines(r) -> list[dict]:
    return [json.loads(line) for line in r.stdout_bytes.decode("utf-8").splitlines()]


def _strict_utf8(data: bytes) -> str:
    return data.decode("utf-8")  # raises on a surrogate or a byte that is not UTF-8


# ---------------------------------------------------------------- the issue's crash


def test_segment_survives_a_lone_surrogate_and_writes_every_record(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(SURROGATE_LINE + "\n" + GOOD_LINE + "\n", encoding="utf-8")
    for compat in ([], ["--compat", "reference"]):
        r = CliRunner().invoke(app, ["segment", str(f), *compat])
        assert r.exit_code == 0, r.exception
        first, second = _lines(r)
        assert first["sentences"][0]["text"] == "A \ufffd b (visual, 0:01)."
        assert first["sentences"][0]["citations"][0]["start"] == 1.0
        assert second["id"] == "b" and second["sentences"][0]["text"] == "It stops (visual, 0:02)."


def test_rescore_survives_a_lone_surrogate(tmp_path):
    rec = {
        "id": "x\ud83d",
        "video": "v",
        "status": "ok",
        "mode": "default",
        "model": "m\udc80",
        "trace": {"text": "A \ud83d b.", "sentences": []},
    }
    f = tmp_path / "scores.jsonl"
    f.write_text(json.dumps(rec) + "\n" + json.dumps({**rec, "id": "y"}) + "\n", encoding="utf-8")
    out = tmp_path / "re.jsonl"
    r = CliRunner().invoke(app, ["rescore", str(f), "--out", str(out)])
    assert r.exit_code == 0, r.exception
    first, second = [json.loads(line) for line in _strict_utf8(out.read_bytes()).splitlines()]
    assert (
        first["id"] == "x\ufffd" and first["trace"]["text"] == "A \ufffd b." and second["id"] == "y"
    )


def test_score_writes_a_record_for_every_hostile_item(tmp_path, media_root):
    good = "The screen is red (visual, 0:00). Therefore A.\nAnswer: A"
    rows = [SURROGATE_LINE.replace('"v"', '"colors"')]
    rows += [
        json.dumps({"id": f"h{i}", "video": "colors", "model_generation": t + " " + good})
        for i, t in enumerate(HOSTILE)
    ]
    rows.append(json.dumps({"id": "ok", "video": "colors", "model_generation": good}))
    f = tmp_path / "r.jsonl"
    f.write_bytes(
        ("\n".join(rows) + "\n").encode("utf-8").replace(b"NUL", b"N\xffL")
    )  # + a bad byte
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        media_root,
        tmp_path / "out",
        engines={"oracle": OracleEngine()},
        summary=RunSummary,
    )
    try:
        result = runner.run(f)
    finally:
        runner.close()
    records = [
        json.loads(line) for line in _strict_utf8(result.records_path.read_bytes()).splitlines()
    ]
    assert [r["id"] for r in records] == ["a"] + [f"h{i}" for i in range(len(HOSTILE))] + ["ok"]
    assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
    assert records[0]["trace"]["sentences"][0]["text"] == "A \ufffd b (visual, 0:01)."
    assert records[1]["trace"]["sentences"][0]["text"] == "N\ufffdL\x00inside (visual, 0:01)."
    assert (
        "replaced by U+FFFD" in records[0]["source"]
        and "replaced by U+FFFD" in records[1]["source"]
    )
    assert records[3]["trace"]["sentences"][0]["text"].startswith(
        "Esc \x1b[2J clears"
    )  # kept as text
    summary = json.loads(_strict_utf8(result.summary_path.read_bytes()))
    assert summary["responses"] == len(rows) and summary["errors"] == 0


# ---------------------------------------------------------------- the reading edge


def test_invalid_utf8_and_lone_surrogates_become_u_fffd_with_a_note(tmp_path):
    f = tmp_path / "r.jsonl"
    lines = [
        b'{"id": "a", "video": "v", "model_generation": "caf\xe9 \xe2\x82 (visual, 0:01)."}',
        b'{"id": "b\\udc80", "video": "v", "model_generation": "ok", "options": ["\\ud83d", {"k\\ud83d": 1}]}',
        b'{"id": "c", "video": "v", "model_generation": "\\ud83d\\ude00 is a pair, kept"}',
        b'{"id": "d", "video": "v", "model_generation": "\xff\xfe"',
    ]  # unterminated: malformed
    f.write_bytes(b"\n".join(lines) + b"\n")
    a, b, c, d = read_responses(f)
    # One U+FFFD per invalid sequence, as errors="replace" decodes (a cut-off "€" is one).
    assert a.generation == "caf\ufffd \ufffd (visual, 0:01)."
    assert a.source == "line 1 (2 characters not valid Unicode replaced by U+FFFD)"
    assert (
        b.id == "b\ufffd" and b.options == ["\ufffd", {"k\ufffd": 1}] and "3 characters" in b.source
    )
    assert c.generation == "\U0001f600 is a pair, kept" and c.source == "line 3"
    assert isinstance(d, InputError) and "malformed JSON on line 4" in d.reason
    # The reference's JSON list: the same rules.
    g = tmp_path / "r.json"
    g.write_bytes(
        b'[{"id": "a", "video": "v", "model_generation": "x \xe9 \xe2\x82 \\ud83d"}, {"id": "b", "video": "v", "model_generation": "y"}]'
    )
    a, b = read_responses(g)
    assert (
        a.generation == "x \ufffd \ufffd \ufffd"
        and "3 characters" in a.source
        and b.source == "item 1"
    )


def test_a_1mb_response_and_every_hostile_character_go_through_segment(tmp_path):
    big = " ".join(f"Dr. Lee waves {i}.5 times (visual, 0:{i % 60:02d})." for i in range(25_000))
    assert len(big) > 1_000_000
    rows = [{"id": "big", "video": "v", "model_generation": big}]
    rows += [{"id": f"h{i}", "video": "v", "model_generation": t} for i, t in enumerate(HOSTILE)]
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = CliRunner().invoke(app, ["segment", str(f)])
    assert r.exit_code == 0, r.exception
    big_rec, *hostile = _lines(r)
    assert len(big_rec["sentences"]) == 25_000
    assert [h["sentences"][0]["text"] for h in hostile] == HOSTILE  # kept, escaped by JSON


# ---------------------------------------------------------------- writers


def _without_surrogates(obj):
    if isinstance(obj, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in obj)
    if isinstance(obj, list):
        return [_without_surrogates(v) for v in obj]
    if isinstance(obj, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in obj.items()}
    return obj


# Any code point, with surrogates, NUL, controls and bidi characters drawn often.
ANY_TEXT = st.text(
    st.characters(exclude_categories=())
    | st.sampled_from(["\ud83d", "\udc80", "\x00", "\x1b", "\u202e"])
)


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        ANY_TEXT | st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
        max_leaves=12,
    )
)
def test_dumps_record_never_fails_and_replaces_only_surrogates(obj):
    line = dumps_record({"x": obj})
    line.encode("utf-8")  # strict: nothing unencodable is left
    assert "\n" not in line  # one record, one line
    assert json.loads(line) == {"x": _without_surrogates(obj)}


def test_dumps_record_examples():
    assert dumps_record({"t": "A \ud83d b \udc80"}) == '{"t": "A \ufffd b \ufffd"}'
    assert dumps_record({"t": "\U0001f600 \x00 \u202e é"}) == '{"t": "\U0001f600 \\u0000 \u202e é"}'
    assert dumps_record({"b": 1, "a": "x"}, sort_keys=True, indent=2) == json.dumps(
        {"a": "x", "b": 1}, indent=2
    )


def test_tables_show_any_string_without_crashing_or_obeying_it():
    nasty = [
        "[/red] closes nothing",
        "lone \ud83d",
        "esc \x1b[2J bell \x07 nul \x00",
        "bidi \u202eevil",
        "x" * 100_000,
    ]
    errors = [{"index": i, "id": s, "source": s, "error": s} for i, s in enumerate(nasty)]
    buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, like a UTF-8 terminal
    console = Console(file=buf, width=120)
    console.print(errors_table(Summary(errors_list=errors)))
    summary = {
        "responses": 1,
        "scored": 1,
        "errors": 0,
        "coverage": 0.5,
        "precision": None,
        "recall": None,
        "f1": None,
        "murgat_s": None,
        "by_model": {
            s: {
                "responses": 1,
                "scored": 1,
                "errors": 0,
                "coverage": 1.0,
                "precision": 1.0,
                "recall": 1.0,
                "f1": 1.0,
                "murgat_s": 1.0,
            }
            for s in nasty
        },
    }
    console.print(summary_table(Summary.model_validate(summary)))
    buf.flush()
    shown = buf.buffer.getvalue().decode("utf-8")
    assert "[/red]" in shown and "\ufffd" in shown
    assert "\\x1b[2J" in shown and "\\x07" in shown and "\\x00" in shown and "\\u202e" in shown
    assert (
        "\x1b[2J" not in shown
        and "\x07" not in shown
        and "\x00" not in shown
        and "\u202e" not in shown
    )
    assert len(shown) < 50_000  # a huge value is cut, not printed whole


# ---------------------------------------------------------------- linear text steps keep their outputs


def test_text_steps_return_what_they_returned_before_they_were_made_linear():
    """tests/support/data/segment_golden.json holds what `segment_response` (both modes) and both
    splitters returned before the text steps were made linear (see make_segment_golden.py)."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for case in golden["full"]:
        assert outputs(case["text"]) == {
            k: case[k] for k in ("default", "reference", "split", "split_reference")
        }, case["text"]
    changed = [
        c["text"][:80] for c in golden["digests"] if digest(outputs(c["text"])) != c["sha256"]
    ]
    assert not changed


def test_text_steps_are_linear():
    """Doubling a long response (or a hostile run of spaces, brackets or tags) doubles the time;
    it used to quadruple or worse. Generous bounds: the machine is shared."""
    import time

    def seconds(text: str, compat) -> float:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            segment_response(text, compat)
            best = min(best, time.perf_counter() - t0)
        return best

    unit = "Dr. Lee says 3.5 (visual, 0:01). “Stop. Now!” he said [audio, 0:02]. 他走了。 "
    shapes = {
        "sentences": lambda n: unit * n,
        "spaces": lambda n: "A" + " " * (60 * n) + "x (visual," + " " * (60 * n) + "x).",
        "blank lines": lambda n: "A.\n" + " \n" * (30 * n) + "Answer" + " " * (30 * n),
        "unclosed": lambda n: "(a. [b. “c. <think>\\boxed{\\text{" * (6 * n),
        "citation chain": lambda n: "He waves." + "(visual, 0:01)." * (4 * n) + " and more.",
    }
    segment_response(unit)
    for name, make in shapes.items():
        for compat in (None, "reference"):
            small, large = seconds(make(500), compat), seconds(make(2000), compat)
            assert large < 12 * small + 0.05, (name, compat, small, large)  # quadratic: 16x


def test_splitters_on_the_issue_examples():
    # split_sentences and split_sentences_reference are also in the golden; a readable pair here.
    assert split_sentences("A \ufffd b (visual, 0:01). It stops.") == [
        "A \ufffd b (visual, 0:01).",
        "It stops.",
    ]
    assert split_sentences_reference("Dr. Lee.") == ["Dr.", "Lee."]
