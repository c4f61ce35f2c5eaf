"""The API-key guard `vllm serve` runs with (`serving.guard`), in front of a real Starlette app
on the same routes and mounts vLLM uses: the live server's every route is tried in
tests/e2e/test_serve_e2e.py; here the cases a running vLLM cannot show cheaply (websockets, root
paths, no key at all) and how `vllm serve` is told to load it."""

from __future__ import annotations

import importlib

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from murgat_local.serving.guard import OPEN_PATHS, APIKeyGuard

KEY = "k3y-for-the-guard"


def app() -> Starlette:
    async def ok(request):
        return JSONResponse({"path": request.url.path})

    async def echo(ws):
        await ws.accept()
        await ws.send_text("hello")
        await ws.close()

    inner = Starlette(routes=[Route("/", ok)])
    routes = [
        Route(p, ok, methods=["GET", "POST"])
        for p in ("/health", "/ping", "/tokenize", "/v1/models", "/invocations")
    ]
    return Starlette(
        routes=routes + [WebSocketRoute("/v1/realtime", echo), Mount("/metrics", inner)]
    )


def client(key: str | None, monkeypatch, root_path: str = "") -> TestClient:
    if key is None:
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
    else:
        monkeypatch.setenv("VLLM_API_KEY", key)
    guarded = app()
    guarded.add_middleware(APIKeyGuard)
    return TestClient(guarded, root_path=root_path)


def test_with_a_key_only_health_and_ping_answer_without_it(monkeypatch):
    c = client(KEY, monkeypatch)
    for path in (
        "/tokenize",
        "/v1/models",
        "/invocations",
        "/metrics",
        "/metrics/",
        "/nowhere",
        "/health/",
        "/healthz",
        "/ping/x",
    ):
        for method in ("GET", "POST", "OPTIONS", "DELETE"):
            r = c.request(method, path)
            assert r.status_code == 401 and r.json() == {"error": "Unauthorized"}, (method, path)
            assert r.headers["www-authenticate"] == "Bearer"
    for path in OPEN_PATHS:
        assert c.get(path).status_code == 200 and c.post(path).status_code == 200


@pytest.mark.parametrize(
    "headers,ok",
    [
        ({"Authorization": f"Bearer {KEY}"}, True),
        ({"Authorization": f"bearer {KEY}"}, True),
        ({"Authorization": f"BEARER {KEY}"}, True),
        ({"Authorization": f"Bearer {KEY} "}, False),
        ({"Authorization": f"Bearer  {KEY}"}, False),
        ({"Authorization": f"Bearer {KEY[:-1]}"}, False),
        ({"Authorization": f"Bearer {KEY}x"}, False),
        ({"Authorization": f"Basic {KEY}"}, False),
        ({"Authorization": KEY}, False),
        ({"X-API-Key": KEY}, False),
        ({"Authorization": "Bearer"}, False),
        ({"Authorization": "Bearer "}, False),
        ({}, False),
    ],
)
def test_the_key_is_read_as_vllm_reads_it(monkeypatch, headers, ok):
    """`Authorization: Bearer KEY`, the scheme in any case, the key exact; vLLM reads no other header."""
    r = client(KEY, monkeypatch).get("/tokenize", headers=headers)
    assert r.status_code == (200 if ok else 401)


def test_a_websocket_without_the_key_is_refused_before_it_opens(monkeypatch):
    c = client(KEY, monkeypatch)
    with pytest.raises(WebSocketDisconnect) as e:
        with c.websocket_connect("/v1/realtime"):
            pass
    assert e.value.code == 1008
    with c.websocket_connect("/v1/realtime", headers={"Authorization": f"Bearer {KEY}"}) as ws:
        assert ws.receive_text() == "hello"


def test_a_root_path_is_read_as_the_router_reads_it(monkeypatch):
    """With `--root-path /api` the router takes both `/health` and `/api/health` as /health, so
    the guard does; `/api/tokenize` is still guarded."""
    c = client(KEY, monkeypatch, root_path="/api")
    assert c.get("/health").status_code == 200
    assert c.get("/api/health").status_code == 200
    assert c.get("/api/tokenize").status_code == 401 and c.get("/tokenize").status_code == 401
    assert c.get("/apihealth").status_code == 401


@pytest.mark.parametrize("key", [None, ""])
def test_without_a_key_nothing_changes(monkeypatch, key):
    """On loopback the launcher allows a server without a key; there every route answers as
    before. (Off loopback the launcher refuses to start without one.)"""
    c = client(key, monkeypatch)
    for path in ("/tokenize", "/v1/models", "/health", "/metrics/"):
        assert c.get(path).status_code == 200, path


def test_vllm_serve_is_told_to_load_the_guard():
    """The launcher's `--middleware` names the guard by an import path vLLM resolves (vLLM
    splits it at the last dot and calls `app.add_middleware` on a class)."""
    from support.paths import require_model

    from murgat_local.engines import load_preset
    from murgat_local.serving import serve_argv

    require_model("smollm2-135m-instruct")
    argv = serve_argv(load_preset("smollm2-135m-instruct"))
    path = argv[argv.index("--middleware") + 1]
    module, name = path.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) is APIKeyGuard
    assert argv.count("--middleware") == 1


def test_vllms_own_app_as_the_launcher_configures_it_needs_the_key_on_every_route(monkeypatch):
    """vLLM's real FastAPI app, built from the launcher's own `vllm serve` arguments (parsed by
    vLLM's parser), without an engine: a request the guard stops never reaches a handler. Every
    route in its OpenAPI document and those beside it answer 401 without the key, except
    /health and /ping. (With the key they reach their handlers: tests/e2e/test_serve_e2e.py, live.)"""
    import re

    from support.paths import require_model
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.entrypoints.launchers.app import build_app
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    from murgat_local.engines import load_preset
    from murgat_local.serving import serve_argv

    require_model("smollm2-135m-instruct")
    monkeypatch.setenv("VLLM_API_KEY", KEY)
    top = FlexibleArgumentParser()
    ServeSubcommand().subparser_init(top.add_subparsers(dest="subparser"))
    args = top.parse_args(serve_argv(load_preset("smollm2-135m-instruct"), host="0.0.0.0"))
    vllm_app = build_app(args, supported_tasks=("generate",))
    routes = [
        (m.upper(), re.sub(r"\{[^}]+\}", "x", p))
        for p, ops in vllm_app.openapi()["paths"].items()
        for m in ops
    ]
    routes += [
        ("GET", "/openapi.json"),
        ("GET", "/docs"),
        ("GET", "/redoc"),
        ("GET", "/metrics"),
        ("GET", "/nowhere"),
        ("OPTIONS", "/v1/chat/completions"),
    ]
    assert ("POST", "/invocations") in routes and ("POST", "/scale_elastic_ep") in routes
    c = TestClient(vllm_app, raise_server_exceptions=False)
    answered = {
        (m, p): c.request(m, p, json={} if m == "POST" else None).status_code for m, p in routes
    }
    assert {k: v for k, v in answered.items() if (v == 401) == (k[1] in OPEN_PATHS)} == {}, answered
    assert c.get("/version", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
