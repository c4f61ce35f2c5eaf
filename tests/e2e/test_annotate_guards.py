"""`murgat annotate` against other web pages and other processes, as a real server (uvicorn on
127.0.0.1): a request a browser marks as coming from another site (`Sec-Fetch-Site`, a foreign
`Origin`) is refused on every API and media route the app has, whatever its method, while the
page's own requests and plain clients (no such headers) are served; a body nested past the
parser's depth is a 400; two servers given one labels file: the second refuses to start."""

from __future__ import annotations

import json
import os

import pytest
from support.annotate_checks import Server
from support.paths import ROOT

from murgat_local.annotate import Session, Store, load_source
from murgat_local.annotate.server import create_app

SAMPLE = ROOT / "samples" / "responses.jsonl"
CROSS = [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    # a page on another port of this machine is another origin
    {"Origin": "http://127.0.0.1:1"},
]


def _args(tmp_path, media_root, labels="ann.jsonl", annotator="ann", *extra):
    return [
        SAMPLE,
        "--media-root",
        media_root,
        "--labels",
        tmp_path / labels,
        "--annotator",
        annotator,
        "--port",
        "0",
        "--resamples",
        "50",
        "--overlap",
        "2",
        *extra,
    ]


def _routes(tmp_path, media_root) -> list[tuple[str, str]]:
    """(method, path) of every route of the app that is not the page itself, from the app."""
    session = Session(load_source(SAMPLE, media_root), Store(tmp_path / "routes.sqlite"), "lister")
    try:
        app = create_app(session)
    finally:
        session.close()
    out = []
    for route in app.routes:
        path = getattr(route, "path", "")
        if path.startswith(("/api/", "/media/")):
            out += [(m, path.replace("{n}", "0")) for m in sorted(route.methods - {"HEAD"})]
    return out


def _status(
    server, method: str, path: str, headers: dict, body: bytes | None = None
) -> tuple[int, str]:
    """(status, text) of one request; a video's bytes read as text are only looked at for the refusal."""
    import urllib.error
    import urllib.request

    hdrs = {"Content-Type": "application/json", **headers} if body is not None else dict(headers)
    req = urllib.request.Request(
        server.url + path.lstrip("/"), data=body, headers=hdrs, method=method
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


@pytest.fixture
def server(tmp_path, media_root):
    s = Server(_args(tmp_path, media_root))
    yield s
    assert s.stop() == 0


def test_cross_site_requests_are_refused_on_every_route(tmp_path, media_root, server):
    routes = _routes(tmp_path, media_root)
    assert {p for _, p in routes} >= {
        "/api/next",
        "/api/answer",
        "/api/undo",
        "/api/progress",
        "/api/agreement",
        "/media/0",
    }
    key = server.call("/api/next")[1]["question"]["key"]
    body = {"key": key, "answer": True}
    answer = json.dumps(body).encode()
    for method, path in routes:
        for headers in CROSS:
            status, text = _status(
                server, method, path, headers, answer if method == "POST" else None
            )
            assert status == 403 and "cross-site" in text, (method, path, headers, status)
    # nothing of the above did anything: no answer, no claim beyond the first question's response
    assert server.call("/api/progress")[1]["answered"] == 0
    # the page's own requests, and clients that send no such header, are served
    own = server.url.rstrip("/")
    for headers in (
        {},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Sec-Fetch-Site": "same-origin", "Origin": own},
    ):
        for method, path in routes:
            if path == "/api/answer":
                continue
            status, _ = _status(server, method, path, headers, b"{}" if method == "POST" else None)
            assert status == 200, (method, path, headers, status)
    status, reply = server.call(
        "/api/answer", body, headers={"Sec-Fetch-Site": "same-origin", "Origin": own}
    )
    assert status == 200 and reply["ok"]
    # the page itself may be opened from a link anywhere
    assert server.call("/", headers={"Sec-Fetch-Site": "cross-site"})[0] == 200


def test_a_deeply_nested_body_is_a_400(server):
    for raw in (b"[" * 100_000, b'{"key": "x", "answer": ' + b"[" * 100_000, b'{"a": ' * 50_000):
        status, text = server.call("/api/answer", raw=raw)
        assert status == 400 and "nested" in str(text), (raw[:20], status, text)
    assert server.call("/api/progress")[0] == 200  # and the server is still up


def test_two_servers_on_one_labels_file_the_second_refuses(tmp_path, media_root):
    first = Server(_args(tmp_path, media_root))
    try:
        # another annotator, even on another store: the file would be each one's in turn
        import subprocess
        import sys

        args = _args(tmp_path, media_root, "ann.jsonl", "bob", "--store", tmp_path / "bob.sqlite")
        second = subprocess.run(
            [sys.executable, "-m", "murgat_local.cli", "annotate", *map(str, args)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        said = "".join(
            (second.stdout + second.stderr).split()
        )  # as one line, whatever the wrapping
        assert second.returncode == 2, said
        assert str(tmp_path / "ann.jsonl") in said and f"process{first.proc.pid}" in said, said
        # an export to that file would overwrite it too
        export = subprocess.run(
            [sys.executable, "-m", "murgat_local.cli", "annotate", *map(str, args), "--export"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert export.returncode == 2 and f"process{first.proc.pid}" in "".join(
            export.stderr.split()
        )
        # another labels file is fine beside it
        other = Server(
            _args(tmp_path, media_root, "bob.jsonl", "bob", "--store", tmp_path / "bob.sqlite")
        )
        assert other.call("/api/progress")[0] == 200 and other.stop() == 0
    finally:
        assert first.stop() == 0
    # the lock goes with the process: a server started now gets the file
    again = Server(
        _args(tmp_path, media_root, "ann.jsonl", "bob", "--store", tmp_path / "bob.sqlite")
    )
    assert again.call("/api/progress")[0] == 200
    assert again.stop() == 0 and "labels: 0 responses" in again.output
    assert os.path.exists(tmp_path / "ann.jsonl")
