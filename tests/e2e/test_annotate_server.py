"""`murgat annotate` as a real server (uvicorn on 127.0.0.1): the sample labelled over the API with
a real SIGKILL of the server mid-way and a restart with the same arguments, the labels then read
by `murgat score --judge human:` and `murgat meta-eval`; the guards (host, origin, JSON, token,
media); `--export`; judge proposals shown and said so; the agreement view."""

from __future__ import annotations

import json

import pytest
from support.annotate_checks import Server, scripted
from support.fakes import OracleEngine
from support.paths import ROOT
from typer.testing import CliRunner

from murgat_local.annotate import Session, Store, load_source
from murgat_local.cli import app
from murgat_local.config import RunConfig
from murgat_local.metrics.run_summary import RunSummary
from murgat_local.pipeline.runner import Runner
from murgat_local.text.labels import read_labels

SAMPLE = ROOT / "samples" / "responses.jsonl"


def _args(tmp_path, media_root, *extra, source=SAMPLE, annotator="ann"):
    return [
        source,
        "--media-root",
        media_root,
        "--labels",
        tmp_path / f"{annotator}.jsonl",
        "--annotator",
        annotator,
        "--port",
        "0",
        *extra,
    ]


def _answer_until(server, n=None):
    """Answer with the scripted annotator (n questions, or to the end); the keys asked."""
    asked = []
    while n is None or len(asked) < n:
        status, nxt = server.call("/api/next")
        assert status == 200, nxt
        if nxt["done"]:
            break
        q = nxt["question"]
        asked.append(q["key"])
        status, body = server.call("/api/answer", {"key": q["key"], "answer": scripted(q)})
        assert status == 200 and body["ok"], body
    return asked


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory, media_root):
    """The sample scored by the oracle judges: a `murgat score` folder to meta-evaluate."""
    out = tmp_path_factory.mktemp("oracle") / "run"
    runner = Runner(
        RunConfig(judge="oracle", decontextualize=False),
        media_root,
        out,
        engines={"oracle": OracleEngine()},
        summary=RunSummary,
    )
    try:
        runner.run(SAMPLE)
    finally:
        runner.close()
    return out


def test_sigkill_mid_way_then_resume_and_the_labels_score(tmp_path, media_root, oracle_run):
    args = _args(tmp_path, media_root)
    server = Server(args)
    first = _answer_until(server, 13)
    server.kill()  # SIGKILL: no handler runs, nothing is flushed by us
    assert server.proc.returncode == -9
    server = Server(args)  # the same arguments
    status, progress = server.call("/api/progress")
    assert progress["answered"] == 13
    rest = _answer_until(server)
    assert not set(first) & set(rest), "a question was asked twice"
    fresh = Session(load_source(SAMPLE, media_root), Store(tmp_path / "fresh.sqlite"), "x")
    every = []
    while not (n := fresh.next())["done"]:
        every.append(n["question"]["key"])
        fresh.answer(n["question"]["key"], scripted(n["question"]))
    fresh.close()
    assert first + rest == every, "a question was skipped"
    assert server.call("/api/next") == (200, {"done": True})
    assert server.stop() == 0
    assert "labels: 6 responses in" in server.output
    labels, errors = read_labels(tmp_path / "ann.jsonl")
    assert errors == [] and len(labels) == 6 and {l.annotator for l in labels.values()} == {"ann"}

    # the labels as a judge: every response scored from them, nothing refused
    runner = Runner(
        RunConfig(judge=f"human:{tmp_path / 'ann.jsonl'}"),
        media_root,
        tmp_path / "human",
        summary=RunSummary,
    )
    try:
        result = runner.run(SAMPLE)
    finally:
        runner.close()
    records = [json.loads(l) for l in result.records_path.read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok"] * 6, [r["error"] for r in records]
    assert result.summary.judge_calls.failed == 0
    # and as the truth of murgat meta-eval, against the oracle run
    out = tmp_path / "meta"
    r = CliRunner().invoke(
        app,
        [
            "meta-eval",
            str(oracle_run),
            "--human",
            str(tmp_path / "ann.jsonl"),
            "--out",
            str(out),
            "--resamples",
            "200",
        ],
    )
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "meta_eval.json").read_text())["runs"]["run"]
    assert meta["responses"]["shared"] == 6 and meta["responses"]["misaligned"] == 0
    assert meta["subtask1"]["n"] == sum(len(l.sentences) for l in labels.values())
    assert meta["subtask2"]["n_sentences"] > 0 and meta["subtask3"]["n"] > 0


def test_the_guards(tmp_path, media_root):
    server = Server(_args(tmp_path, media_root))
    try:
        key = server.call("/api/next")[1]["question"]["key"]
        assert server.call("/api/answer", raw=b"{nope")[0] == 422
        assert server.call("/api/answer", {"key": key})[0] == 422
        assert server.call("/api/answer", {"key": key, "answer": "maybe"})[0] == 422
        assert server.call("/api/answer", {"key": "nobody#s1.verifiable", "answer": True})[0] == 404
        assert (
            server.call(
                "/api/answer", {"key": key, "answer": True}, headers={"Content-Type": "text/plain"}
            )[0]
            == 415
        )
        assert (
            server.call(
                "/api/answer",
                {"key": key, "answer": True},
                headers={"Origin": "http://evil.example"},
            )[0]
            == 403
        )
        assert (
            server.call("/api/next", headers={"Host": "evil.example:80"})[0] == 403
        )  # DNS rebinding
        assert server.call("/api/progress")[1]["answered"] == 0  # nothing above was kept
        assert server.call("/media/0", headers={"Range": "bytes=0-9"})[0] == 206
        assert server.call("/media/99")[0] == 404 and server.call("/media/..%2f..%2fetc%2fpasswd")[
            0
        ] in (404, 422)
        status, page = server.call("/")
        assert status == 200 and "http" not in page  # nothing from elsewhere
        script = server.call("/app.js")[1]
        for sink in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "Function(",
        ):
            assert sink not in script, sink  # response text reaches the page as text only
    finally:
        assert server.stop() == 0


def test_a_token_is_checked_on_every_request(tmp_path, media_root):
    token = "t" * 24
    server = Server(_args(tmp_path, media_root), env={"MURGAT_ANNOTATE_TOKEN": token})
    try:
        for path in ("/", "/api/next", "/api/progress", "/media/0", "/app.js"):
            assert server.call(path)[0] == 401, path
        assert server.call("/api/next", headers={"Authorization": "Bearer " + "x" * 24})[0] == 401
        assert server.call("/api/next", headers={"Authorization": f"Bearer {token}"})[0] == 200
        import urllib.request

        class Keep(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *a, **k):
                return None

        opener = urllib.request.build_opener(Keep)
        try:
            opener.open(server.url + f"?token={token}")
        except urllib.error.HTTPError as e:  # the 303 that sets the cookie
            assert e.code == 303 and e.headers["Location"] == "/"
            cookie = e.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert server.call("/api/next", headers={"Cookie": cookie.split(";")[0]})[0] == 200
    finally:
        server.stop()
    r = CliRunner().invoke(
        app,
        ["annotate", *map(str, _args(tmp_path, media_root, "--host", "0.0.0.0"))],
        env={"MURGAT_ANNOTATE_TOKEN": ""},
    )
    assert r.exit_code == 2 and "MURGAT_ANNOTATE_TOKEN" in r.output
    r = CliRunner().invoke(
        app,
        ["annotate", *map(str, _args(tmp_path, media_root))],
        env={"MURGAT_ANNOTATE_TOKEN": "short"},
    )
    assert r.exit_code == 2 and "at least 16" in r.output


def test_judge_proposals_export_and_agreement(tmp_path, media_root, oracle_run):
    # a second annotator labels everything in-process, on the same store
    other = Session(
        load_source(oracle_run, media_root, responses=SAMPLE),
        Store(tmp_path / "annotate.sqlite"),
        "b",
    )
    while not (n := other.next())["done"]:
        q = n["question"]
        other.answer(q["key"], (not scripted(q)) if q["kind"] == "entailed" else scripted(q))
    other.close()
    args = _args(
        tmp_path,
        media_root,
        "--show-judge",
        "--responses",
        SAMPLE,
        "--resamples",
        "100",
        source=oracle_run,
    )
    server = Server(args)
    try:
        q = server.call("/api/next")[1]["question"]
        assert (
            q["proposal"] is True and q["proposal_from"] == "judge"
        )  # the oracle's verifiable verdict
        origins = set()
        while q is not None:
            if q["kind"] == "facts":  # the judge's decomposition, or the claim where it made none
                origins.add(q["proposal_from"])
            server.call("/api/answer", {"key": q["key"], "answer": scripted(q)})
            n = server.call("/api/next")[1]
            q = None if n["done"] else n["question"]
        assert "judge" in origins
        status, report = server.call("/api/agreement")
        assert status == 200 and report["annotators"] == ["ann", "b"]
        pair = report["pairs"][0]
        assert pair["shared"] == 6 and pair["subtask1"]["kappa"]["value"] == 1.0
        assert (
            pair["subtask3"]["n"] > 0 and pair["subtask3"]["accuracy"] < 1.0
        )  # b said the opposite
        assert pair["subtask3"]["kappa"]["value"] < 0
        assert [j["annotator"] for j in report["judge"]] == ["ann", "b"]
        assert report["judge"][0]["subtask1"]["n"] == pair["subtask1"]["n"]
    finally:
        assert server.stop() == 0
    written = (tmp_path / "ann.jsonl").read_text()
    assert all(json.loads(l)["judge_shown"] is True for l in written.splitlines())
    (tmp_path / "ann.jsonl").unlink()
    r = CliRunner().invoke(app, ["annotate", *map(str, args[:-2]), "--export"])
    assert r.exit_code == 0 and "labels: 6 responses" in r.output, r.output
    assert (tmp_path / "ann.jsonl").read_text() == written


def test_two_annotators_two_servers_one_store_with_overlap(tmp_path, media_root):
    """Each annotator runs their own server on the shared store: the K shared responses go to
    both, each other response to whoever reaches it first (a claim committed in the store)."""
    a = Server(_args(tmp_path, media_root, "--overlap", "2", annotator="a"))
    b = Server(_args(tmp_path, media_root, annotator="b"))  # the overlap is read from the store
    try:
        done = {"a": set(), "b": set()}
        active = {"a": a, "b": b}
        while active:
            for name, server in list(active.items()):
                status, nxt = server.call("/api/next")
                if nxt["done"]:
                    del active[name]
                    continue
                q = nxt["question"]
                assert (
                    server.call("/api/answer", {"key": q["key"], "answer": scripted(q)})[0] == 200
                )
                done[name].add(q["key"].rpartition("#")[0])
        assert a.call("/api/progress")[1]["overlap"] == 2
        shared = done["a"] & done["b"]
        assert len(shared) == 2 and len(done["a"] | done["b"]) == 6
        status, report = b.call("/api/agreement")
        assert report["annotators"] == ["a", "b"] and report["pairs"][0]["shared"] == 2
        assert report["pairs"][0]["subtask1"]["alpha"]["value"] == 1.0  # the same script
    finally:
        assert a.stop() == 0 and b.stop() == 0
    for name in ("a", "b"):
        labels, errors = read_labels(tmp_path / f"{name}.jsonl")
        assert errors == [] and set(labels) == done[name]
