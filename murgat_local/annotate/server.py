"""The labeling page and its API, over one `Session` (FastAPI, served by uvicorn: both come with vLLM).

    GET  /api/next       {"done": false, "question": {...}} or {"done": true}
    POST /api/answer     {"key": "...", "answer": true | false | "unsure" | ["fact", ...]}
    POST /api/undo       {"undone": key or null}: the annotator's latest answer is withdrawn
    GET  /api/progress   {"answered": N, "total": M, "unsure", "responses": {"done", "total"}, ...}
    GET  /api/agreement  annotators against each other and the run's judges (`agreement`)
    GET  /media/{n}      the n-th video the source cites (and nothing else), with byte ranges

Every request passes `_guard`: on loopback with no token, the Host header must name the loopback
address the server is on (a page elsewhere cannot reach it by DNS rebinding); with a token
(`MURGAT_ANNOTATE_TOKEN`, required off loopback) every request carries it, as a bearer header or
as the cookie a first visit to `/?token=...` sets. A POST must be JSON. A request to the API or
the media that the browser says comes from another site (`Sec-Fetch-Site: cross-site` or
`same-site`, or an `Origin` not this server's) is refused, whatever its method: a page elsewhere
can neither answer in the annotator's name nor make the server work (`<img src=.../api/agreement>`
would run a bootstrap each time, `/api/next` claims a response); the page itself may be opened
from a link anywhere. Every response forbids any network source but this server
(Content-Security-Policy) and framing.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import mimetypes
import signal
import socket
from collections.abc import Callable
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.concurrency import run_in_threadpool

from .session import Session, agreement_report
from .store import Store

COOKIE = "murgat_annotate"
PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
# What a page on another site may not reach: every call there does work or changes state.
GUARDED = ("/api/", "/media/")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cross_site(request: Request, host: str) -> bool:
    """Whether the browser says `request` comes from a page that is not this server's. Requests
    with neither header (curl, scripts, older browsers on a GET) are not marked, so pass."""
    if request.headers.get("sec-fetch-site", "").lower() in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("origin")
    return origin is not None and origin not in (f"http://{host}", f"https://{host}")


def page_file(name: str) -> bytes:
    return (resources.files("murgat_local.annotate") / "page" / name).read_bytes()


def create_app(
    session: Session,
    *,
    token: str | None = None,
    hosts: frozenset[str] | None = None,
    resamples: int = 10_000,
):
    """The ASGI app.

    Args:
        session: the annotator's session.
        token: when set, every request must carry it.
        hosts: the Host headers accepted (None: any; used with a token).
        resamples: bootstrap resamples of the agreement view's intervals.
    """
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    pages = {path: (page_file(name), kind) for path, (name, kind) in PAGE_FILES.items()}

    def refuse(status: int, why: str) -> Response:
        return PlainTextResponse(why, status_code=status, headers=HEADERS)

    def has_token(request: Request, token: str) -> bool:
        given = request.cookies.get(COOKIE, "")
        auth = request.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            given = auth[len("Bearer ") :]
        return hmac.compare_digest(given.encode(), token.encode())

    @app.middleware("http")
    async def _guard(request: Request, call_next: Callable):
        host = request.headers.get("host", "")
        if hosts is not None and host not in hosts:
            return refuse(403, "this server answers only on its loopback address")
        if token is not None and not has_token(request, token):
            offered = request.query_params.get("token")
            if (
                request.url.path == "/"
                and offered
                and hmac.compare_digest(offered.encode(), token.encode())
            ):
                response = RedirectResponse("/", status_code=303, headers=HEADERS)
                response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
                return response
            return refuse(
                401,
                "a token is required (open /?token=... once, or send Authorization: Bearer ...)",
            )
        if (request.method != "GET" or request.url.path.startswith(GUARDED)) and cross_site(
            request, host
        ):
            return refuse(403, "cross-site request refused")
        if (
            request.method == "POST"
            and request.headers.get("content-type", "").split(";")[0].strip() != "application/json"
        ):
            return refuse(415, "send JSON (Content-Type: application/json)")
        response = await call_next(request)
        for k, v in HEADERS.items():
            response.headers.setdefault(k, v)
        if not request.url.path.startswith("/media/"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    def page(path: str) -> Response:
        body, kind = pages[path]
        return Response(body, media_type=kind)

    app.get("/")(lambda: page("/"))
    app.get("/app.js")(lambda: page("/app.js"))
    app.get("/style.css")(lambda: page("/style.css"))
    # Browsers ask for one unprompted; no icon, and no 404 in the console.
    app.get("/favicon.ico")(lambda: Response(status_code=204))

    @app.get("/api/next")
    def next_question():
        return session.next()

    @app.post("/api/answer")
    async def answer(request: Request):
        # The body is read by hand: a malformed one gets our error, not FastAPI's validation dump.
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=422)
        except RecursionError:  # the parser's depth limit: no answer is nested more than once
            return JSONResponse({"error": "the body is nested too deeply"}, status_code=400)
        if not isinstance(body, dict) or "key" not in body or "answer" not in body:
            return JSONResponse({"error": 'send {"key": ..., "answer": ...}'}, status_code=422)
        status, out = await run_in_threadpool(session.answer, body["key"], body["answer"])
        return JSONResponse(out, status_code=status)

    @app.post("/api/undo")
    def undo():
        return session.undo()

    @app.get("/api/progress")
    def progress():
        return session.progress()

    @app.get("/api/agreement")
    def agreement():
        # Its own connection: the bootstrap takes a moment, and answers must not wait for it.
        store = Store(session.store.path)
        try:
            return agreement_report(store, session.source, resamples=resamples)
        finally:
            store.close()

    @app.get("/media/{n}")
    def media(n: int):
        path = session.media_path(n)
        if path is None:
            return refuse(404, "no such video in this source")
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return FileResponse(path, media_type=kind)

    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free one), made before the server starts so that the URL
    printed is the one served."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def serve(
    session: Session, sock: socket.socket, *, token: str | None = None, resamples: int = 10_000
) -> list[int]:
    """Serve until SIGINT or SIGTERM; returns the signals that stopped it.

    uvicorn stops gracefully on either, then raises the signal again under the handler that was
    there before it started: that handler is ours and only notes it, so the caller still writes
    the labels file before the process ends."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    hosts = None
    if token is None:
        hosts = frozenset(
            {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"{host}:{port}"}
        )
    app = create_app(session, token=token, hosts=hosts, resamples=resamples)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    stopped: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, frame: stopped.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return stopped


__all__ = ["bind", "create_app", "cross_site", "is_loopback", "serve"]
