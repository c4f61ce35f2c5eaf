"""The API-key guard in front of every route of a `vllm serve` the launcher starts.

vLLM checks its key only on paths under `/v1`, `/v2`, `/inference` and `/cohere`; the rest of
its server answers anyone: SageMaker's `/invocations` (which runs chat completions),
`/tokenize`, `/detokenize`, `/generative_scoring`, `/scale_elastic_ep`, `/metrics`, `/load`,
`/version`, the OpenAPI document (vllm-project/vllm#58144). So the launcher gives vLLM this
class with `--middleware` (vLLM adds it with `app.add_middleware` after its own, which puts it
outermost): with a key in `VLLM_API_KEY`, every request but `/health` and `/ping` (liveness, for
the launcher and load balancers) needs it, whatever its path, method or protocol. A path no route
has is a 401 too, so a caller without the key cannot map the server.

The key is read the way vLLM's own check reads it (`Authorization: Bearer KEY`, the scheme in any
case; vLLM reads no other header), from the environment the launcher already passes to vLLM,
never from argv. Without a key, which the launcher allows on loopback only, the guard lets every
request through, as vLLM's own check does.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from .launcher import API_KEY_VAR

# Liveness only: vLLM's /health and SageMaker's /ping answer no more than "up" (200 or 503).
OPEN_PATHS = frozenset({"/health", "/ping"})

_UNAUTHORIZED = b'{"error":"Unauthorized"}'


def _digest(value: bytes) -> bytes:
    # Compared as digests so the comparison takes the same time whatever the length sent.
    return hashlib.sha256(value).digest()


def route_path(scope) -> str:
    """The path the router matches: with a root path (`--root-path`), Starlette strips it when
    the request's path starts with it and a `/` follows; the guard must agree on /health."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        if path == root:
            return ""
        if path[len(root)] == "/":
            return path[len(root) :]
    return path


class APIKeyGuard:
    """Pure ASGI middleware; vLLM builds it as `APIKeyGuard(app)` in each API-server process."""

    def __init__(self, app, key: str | None = None) -> None:
        self.app = app
        key = os.environ.get(API_KEY_VAR) if key is None else key
        # vLLM guards with the variable's value as it is, and not at all when it is empty.
        self._key = _digest(key.encode()) if key else None

    def authorized(self, headers) -> bool:
        """Whether the first Authorization header is `Bearer KEY` (what vLLM's check reads)."""
        value = next((v for k, v in headers if k.lower() == b"authorization"), None)
        if value is None:
            return False
        scheme, _, token = value.partition(b" ")
        key = self._key
        return (
            key is not None
            and scheme.lower() == b"bearer"
            and hmac.compare_digest(_digest(token), key)
        )

    async def __call__(self, scope, receive, send) -> None:
        if (
            self._key is None
            or scope["type"] not in ("http", "websocket")
            or route_path(scope) in OPEN_PATHS
            or self.authorized(scope.get("headers") or ())
        ):
            await self.app(scope, receive, send)  # lifespan events, liveness, a keyed request
        elif scope["type"] == "websocket":
            # Closing before accepting refuses the handshake (the server answers 403).
            await send({"type": "websocket.close", "code": 1008, "reason": "Unauthorized"})
        else:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                        (b"www-authenticate", b"Bearer"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _UNAUTHORIZED})
