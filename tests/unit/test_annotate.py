"""`murgat annotate` without the server: which questions are asked, the store (a real SIGKILL of a
writer process), the labels file read back by `text/labels.py`, resuming a session, overlap,
and the agreement statistics against published values."""

from __future__ import annotations

import json

import pytest
from support.annotate_checks import scripted
from support.paths import ROOT

from murgat_local.annotate import Session, SessionError, Store, StoreBusy, load_source
from murgat_local.annotate.export import label_record, to_labelled
from murgat_local.annotate.questions import check_answer, next_question, plain, questions
from murgat_local.annotate.session import agreement_report
from murgat_local.metrics.agreement import cohen_kappa, krippendorff_alpha
from murgat_local.text.labels import compare_sentences, read_labels
from murgat_local.text.segment import segment

SAMPLE = ROOT / "samples" / "responses.jsonl"
ROWS = [
    {
        "id": "two",
        "video": "colors",
        "model_generation": "The screen is red (visual, 0:00; audio, 0:00-0:01). A tone plays. So A.\nAnswer: A",
    },
    {
        "id": "three",
        "video": "colors",
        "model_generation": "Colours change (visual, 0:01; visual, 0:02; visual, 0:03). It is green (visual, 0:01).",
    },
    {"id": "gone", "video": "../outside", "model_generation": "x (visual, 0:00)."},
]


@pytest.fixture()
def source(tmp_path, media_root):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return load_source(path, media_root)


def _asked(item, answers):
    return [q.suffix for q in questions(item, answers)]


def test_only_the_questions_the_answers_make_necessary(source):
    two = source.items[0]
    a: dict = {}
    assert _asked(two, a) == ["s1.verifiable", "s2.verifiable", "s3.verifiable"]
    a.update({"s1.verifiable": True, "s2.verifiable": True, "s3.verifiable": False})
    # s2 is verifiable but uncited, s3 not verifiable: only s1 is decomposed
    assert next_question(two, a).suffix == "s1.facts"
    a["s1.facts"] = ["The screen is red.", "The screen is bright."]
    assert _asked(two, a)[3:] == ["s1.facts", "s1.f1.entailed", "s1.f2.entailed"]
    a.update({"s1.f1.entailed": True, "s1.f2.entailed": False})
    assert next_question(two, a).suffix == "s1.f1.c1.precise"  # the not-entailed fact gets none
    a["s1.f1.c1.precise"] = False  # two citations, the first not needed: the second is, unasked
    assert next_question(two, a) is None
    rec, why = label_record(two, a, "ann")
    assert why is None and rec["sentences"][0]["facts"] == [
        {"text": "The screen is red.", "entailed": True, "precise": [False, True]},
        {"text": "The screen is bright.", "entailed": False},
    ]
    del a["s1.f1.c1.precise"]
    a["s1.f1.c1.precise"] = True
    assert next_question(two, a).suffix == "s1.f1.c2.precise"

    three = source.items[1]
    b = {
        "s1.verifiable": True,
        "s2.verifiable": True,
        "s1.facts": ["Colours change."],
        "s2.facts": ["It is green."],
        "s1.f1.entailed": True,
        "s2.f1.entailed": True,
    }
    # three citations: each asked, whatever the first answer; one citation: needed, unasked
    assert [q.suffix for q in questions(three, b) if q.kind == "precise"] == [
        "s1.f1.c1.precise",
        "s1.f1.c2.precise",
        "s1.f1.c3.precise",
    ]
    b.update({"s1.f1.c1.precise": False, "s1.f1.c2.precise": False, "s1.f1.c3.precise": False})
    rec, _ = label_record(three, b, "ann")
    assert rec["sentences"][1]["facts"][0]["precise"] == [True]
    assert [u.id for u in source.unusable] == [
        "gone"
    ] and "escapes the media root" in source.unusable[0].reason


def test_unsure_skips_what_depends_on_it_and_what_cannot_be_written(source):
    two = source.items[0]
    a = {"s1.verifiable": "unsure", "s2.verifiable": True, "s3.verifiable": False}
    assert next_question(two, a) is None  # nothing is asked of an unsure sentence
    rec, why = label_record(two, a, "ann")
    assert rec is None and why == "sentence 1: verifiability answered unsure"
    a = {
        "s1.verifiable": True,
        "s2.verifiable": True,
        "s3.verifiable": False,
        "s1.facts": ["Red."],
        "s1.f1.entailed": "unsure",
    }
    assert next_question(two, a) is None
    rec, _ = label_record(two, a, "ann")
    assert "facts" not in rec["sentences"][0] and rec["unsure"] == ["s1.f1.entailed"]


def test_answers_are_checked():
    from murgat_local.annotate.questions import Question

    facts, yes = Question("s1.facts", "facts", 0), Question("s1.verifiable", "verifiable", 0)
    assert check_answer(yes, True) == (True, None) and check_answer(yes, "unsure") == (
        "unsure",
        None,
    )
    assert check_answer(yes, "yes")[1] and check_answer(yes, 1)[1]
    assert check_answer(facts, ["  a   b ", "", "c"]) == (["a b", "c"], None)
    assert "twice" in check_answer(facts, ["a b", "a  b"])[1]
    assert (
        check_answer(facts, ["", " "])[1]
        and check_answer(facts, True)[1]
        and check_answer(facts, "x")[1]
    )
    # what the decomposer stage admits, since `human:` answers it with these facts
    assert "double quote" in check_answer(facts, ['A voice says "hi".'])[1]
    assert "backslash" in check_answer(facts, ["a \\ b"])[1]
    assert "at most 6 facts" in check_answer(facts, list("abcdefg"))[1]
    assert "at most 120 characters" in check_answer(facts, ["x" * 121])[1]
    assert check_answer(facts, [plain('A voice says "hi" twice.')]) == (
        ["A voice says \u201chi\u201d twice."],
        None,
    )


def _label_all(session, answer=scripted):
    asked = []
    while True:
        nxt = session.next()
        if nxt["done"]:
            return asked
        q = nxt["question"]
        asked.append(q["key"])
        status, body = session.answer(q["key"], answer(q))
        assert status == 200, body


def test_sample_labels_round_trip_through_the_reader(tmp_path, media_root):
    src = load_source(SAMPLE, media_root)
    session = Session(src, Store(tmp_path / "s.sqlite"), "ann", labels=tmp_path / "labels.jsonl")
    asked = _label_all(session)
    assert len(asked) == len(set(asked)) > 20
    written, left = session.close()
    assert written == 6 and left == []
    labels, errors = read_labels(tmp_path / "labels.jsonl")
    assert errors == [] and list(labels) == [it.id for it in src.items]
    records = [json.loads(l) for l in (tmp_path / "labels.jsonl").read_text().splitlines()]
    for rec, item in zip(records, src.items):
        got = labels[rec["id"]]
        assert (got.id, got.annotator, got.sentences) == (
            to_labelled(rec).id,
            "ann",
            to_labelled(rec).sentences,
        )
        gen = next(
            json.loads(l) for l in SAMPLE.read_text().splitlines() if json.loads(l)["id"] == item.id
        )
        assert (
            compare_sentences(got, [s.text for s in segment(gen["model_generation"]).sentences])
            is None
        )
        assert rec["judge_shown"] is False
    first = records[0]["sentences"]
    assert first[3]["facts"][0]["precise"] == [True, False]  # the two-citation sentence
    assert first[4] == {
        "text": "Therefore, the colour after green is blue, so A is correct.",
        "verifiable": False,
    }


def test_a_session_resumes_where_it_stopped(tmp_path, media_root):
    src = load_source(SAMPLE, media_root)
    db = tmp_path / "s.sqlite"
    session = Session(src, Store(db), "ann")
    asked = []
    for _ in range(17):
        q = session.next()["question"]
        asked.append(q["key"])
        assert session.answer(q["key"], scripted(q))[0] == 200
    with pytest.raises(StoreBusy):
        Session(src, Store(db), "ann")  # one session per annotator
    session.store.close()  # stopped without a word: no export, no goodbye
    again = Session(src, Store(db), "ann", labels=tmp_path / "l.jsonl")
    assert again.progress()["answered"] == 17
    rest = _label_all(again)
    assert not set(rest) & set(asked)  # nothing asked twice
    fresh = Session(src, Store(tmp_path / "fresh.sqlite"), "ann")
    assert asked + rest == _label_all(fresh)  # and nothing skipped
    again.close()
    fresh.close()


def test_undo_goes_back_and_a_repeat_is_harmless(tmp_path, media_root):
    src = load_source(SAMPLE, media_root)
    s = Session(src, Store(tmp_path / "s.sqlite"), "ann")
    q1 = s.next()["question"]
    assert s.answer(q1["key"], True)[0] == 200
    assert s.answer(q1["key"], True) == (200, {"ok": True, "key": q1["key"], "already": True})
    assert s.answer(q1["key"], False)[0] == 409
    assert s.answer(q1["key"].replace("s1.", "s4.f1."), True)[0] == 409  # not open
    assert s.answer("nope#s1.verifiable", True)[0] == 404
    assert s.undo() == {"undone": q1["key"]}
    assert s.next()["question"]["key"] == q1["key"]
    assert s.undo() == {"undone": None}
    s.close()


def test_answers_on_another_split_are_not_reused(tmp_path, media_root):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n")
    s = Session(load_source(path, media_root), Store(tmp_path / "s.sqlite"), "ann")
    _label_all(s)
    s.store.close()
    path.write_text(
        json.dumps({**ROWS[0], "model_generation": "The screen is blue (visual, 0:02)."}) + "\n"
    )
    again = Session(load_source(path, media_root), Store(tmp_path / "s.sqlite"), "ann")
    assert again.stale == 7 and again.next()["question"]["key"] == "two#s1.verifiable"
    again.close()


def test_overlap_shares_k_and_splits_the_rest(tmp_path, media_root):
    src = load_source(SAMPLE, media_root)
    db = tmp_path / "s.sqlite"
    a, b = (
        Session(src, Store(db), "a", overlap=2),
        Session(src, Store(db), "b"),
    )  # b reads it from the store
    done = {"a": [], "b": []}
    turn = 0
    while True:
        who, s = (("a", a), ("b", b))[turn % 2]
        turn += 1
        nxt = s.next()
        if nxt["done"] and a.next()["done"] and b.next()["done"]:
            break
        if not nxt["done"]:
            q = nxt["question"]
            s.answer(q["key"], scripted(q))
            done[who].append(q["key"].rpartition("#")[0])
    shared = a.shared
    assert len(shared) == 2 and b.shared == shared
    ra, rb = set(done["a"]), set(done["b"])
    assert ra & rb == shared and ra | rb == {it.id for it in src.items}
    assert done["a"][0] in shared and done["b"][0] in shared  # the shared ones come first
    with pytest.raises(SessionError, match="--overlap 2"):
        Session(src, Store(db), "c", overlap=3)
    report = agreement_report(a.store, src, resamples=200)
    pair = report["pairs"][0]
    assert (pair["a"], pair["b"], pair["shared"]) == ("a", "b", 2)
    assert (
        pair["subtask1"]["accuracy"] == 1.0 and pair["subtask1"]["kappa"]["value"] == 1.0
    )  # the same script
    assert (
        pair["subtask1"]["alpha"]["value"] == 1.0
        and pair["subtask1"]["n"] == pair["subtask1"]["kappa"]["n"] > 0
    )
    assert pair["subtask2"]["f1"] == 1.0
    a.close()
    b.close()


def test_kappa_and_alpha_match_published_values():
    sk = pytest.importorskip("sklearn.metrics")
    x, y = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": binary, two coders: 0.095
    assert round(krippendorff_alpha(list(zip(x, y)))["value"], 3) == 0.095
    assert cohen_kappa(list(zip(x, y)))["value"] == pytest.approx(sk.cohen_kappa_score(x, y))
    N = None
    units = list(
        zip(
            [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
            [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
        )
    )
    assert (
        round(krippendorff_alpha(units)["value"], 3) == 0.743
    )  # the same paper, nominal, four coders
    assert (
        cohen_kappa([(True, True)] * 3)["value"] is None
        and krippendorff_alpha([(1, None)])["value"] is None
    )


def test_usage_errors_exit_2(tmp_path, media_root):
    from typer.testing import CliRunner

    from murgat_local.cli import app

    def run(*args):
        r = CliRunner().invoke(app, ["annotate", *map(str, args)])
        return r.exit_code, " ".join(r.output.split())

    base = [
        "--media-root",
        media_root,
        "--labels",
        tmp_path / "l.jsonl",
        "--annotator",
        "ann",
        "--export",
    ]
    assert run(tmp_path / "missing.jsonl", *base) == (
        2,
        f"error: {tmp_path / 'missing.jsonl'} is neither a "
        "responses file nor a `murgat score` folder",
    )
    (tmp_path / "folder").mkdir()
    code, out = run(tmp_path / "folder", *base)
    assert code == 2 and "scores.jsonl and summary.json" in out
    code, out = run(SAMPLE, *base[:-2], "a\x1bb", "--export")
    assert code == 2 and "printable" in out
    assert run(SAMPLE, *base, "--overlap", "2")[0] == 0
    code, out = run(SAMPLE, *base, "--overlap", "3")
    assert code == 2 and "--overlap 2" in out


def _responses_asked(asked: list[str]) -> list[str]:
    return list(dict.fromkeys(k.rpartition("#")[0] for k in asked))


def test_responses_are_asked_in_a_seeded_random_order_written_into_the_labels(tmp_path, media_root):
    import hashlib

    from murgat_local.meta.views import label_sampling

    src = load_source(SAMPLE, media_root)
    ids = [it.id for it in src.items]

    def labelled(name, **order):
        labels = tmp_path / f"{name}.jsonl"
        session = Session(src, Store(tmp_path / f"{name}.sqlite"), "ann", labels=labels, **order)
        asked = _responses_asked(_label_all(session))
        session.close()
        return asked, labels

    first, labels = labelled("a", order_seed=5)
    again, _ = labelled("b", order_seed=5)
    # the order is the seed's: by SHA-256 of seed and id, whatever the source's order
    want = sorted(ids, key=lambda i: hashlib.sha256(f"5\0{i}".encode()).hexdigest())
    assert first == again == want != ids
    other, _ = labelled("c", order_seed=6)
    assert sorted(other) == sorted(ids) and other != first
    default, default_labels = labelled("d")  # seed 0 unless told
    assert default == sorted(ids, key=lambda i: hashlib.sha256(f"0\0{i}".encode()).hexdigest())
    # each labels line records the order it was asked in; the file keeps the source's order
    records = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [r["id"] for r in records] == ids and all(r["order"] == {"seed": 5} for r in records)
    got, errors = read_labels(labels)
    assert errors == [] and {r.order_seed for r in got.values()} == {5}
    assert label_sampling(labels) == {"random": True, "seed": 5, "labelled": 6, "note": None}
    # --order file: the source's order, and no random order claimed
    asked, file_labels = labelled("f", order="file")
    assert asked == ids
    assert all("order" not in json.loads(line) for line in file_labels.read_text().splitlines())
    sampling = label_sampling(file_labels)
    assert sampling["random"] is False and "6 of 6 labelled responses record no" in sampling["note"]


def test_a_store_keeps_the_order_it_was_started_with(tmp_path, media_root):
    src = load_source(SAMPLE, media_root)
    db = tmp_path / "s.sqlite"
    Session(src, Store(db), "ann", order_seed=3).release()
    for bad in ({"order": "file"}, {"order_seed": 4}):
        store = Store(db)
        with pytest.raises(SessionError, match="started with --order random, --order-seed 3"):
            Session(src, store, "ann", **bad)
        store.close()  # as `open_session` does
    kept = Session(src, Store(db), "ann")  # nothing said: the store's order
    assert kept.order_seed == 3
    kept.release()
    store = Store(tmp_path / "t.sqlite")
    with pytest.raises(SessionError, match="does not go with --order file"):
        Session(src, store, "ann", order="file", order_seed=1)
    store.close()
    # A store with answers from before the order was recorded was asked in file order: it
    # goes on so, and its labels claim no random order.
    old = tmp_path / "old.sqlite"
    session = Session(src, Store(old), "ann", order="file")
    q = session.next()["question"]
    assert session.answer(q["key"], scripted(q))[0] == 200
    session.store.db.execute("DELETE FROM meta WHERE name = 'order'")
    session.release()
    resumed = Session(src, Store(old), "ann")
    assert resumed.order_seed is None and [it.id for it in resumed.order] == [
        it.id for it in src.items
    ]
    resumed.release()
