"""What an `OpenAIEngine` finds out when it starts, before any request: its model's tokenizer
and placeholders where the folder is readable here, and the server's model and tokenizer.

The server's `/v1/models` must list the served model with the preset's context length
(a starting server is waited for), and a `--tokenizer` folder must be the served model's (the
server reads each of its special tokens as one token). Apart from `openai.py`, which judges,
because these run once, at start, and only read the engine's settings (`ServerChecks` is a base
of `OpenAIEngine` and names what it reads).
"""

from __future__ import annotations

import time

from .base import EngineUnavailable
from .presets import Preset
from .reach import placeholder_tokens
from .render import ChatRenderer

# Special tokens per `/tokenize` request when checking a tokenizer folder against the server
# (Gemma has thousands; one request each way stays far below any context length).
_CHECK_CHUNK = 256


def _local_renderer(preset: Preset) -> ChatRenderer | None:
    """The model's own tokenizer and processor, when its folder is readable here: its special
    tokens are neutralized by name and its requests are fitted to the preset's limits exactly
    as in-process. Else None (an oversized request is then refused by the server with its
    reason). A readable folder whose tokenizer does not load is an error, never a silent
    fallback: the identity says the model's own special tokens are broken."""
    if not (preset.path / "config.json").is_file():
        return None
    try:
        return ChatRenderer(preset.path, preset, trust_remote_code=preset.trust_remote_code)
    except Exception as e:
        raise ValueError(
            f"the tokenizer or processor in {preset.path} does not load ({type(e).__name__}: {e})"
        ) from None


def _placeholders(
    preset: Preset, renderer: ChatRenderer | None, tokenizer
) -> dict[int, str] | None:
    """The served model's placeholder token ids (`reach.placeholder_tokens`) from its folder when
    readable here, else from the tokenizer folder given; None when neither is."""
    if renderer is not None:
        return placeholder_tokens(preset.path, renderer.tokenizer)
    if tokenizer is None:
        return None
    from transformers import AutoTokenizer

    return placeholder_tokens(
        tokenizer,
        AutoTokenizer.from_pretrained(tokenizer, trust_remote_code=preset.trust_remote_code),
    )


class ServerChecks:
    """The start-up checks of an `OpenAIEngine` against its server (a base of that class)."""

    # What the checks read of the engine, set in `OpenAIEngine.__init__`.
    preset: Preset
    base_url: str
    headers: dict[str, str]
    retry_for_s: float
    special_tokens: list[str]
    server_model: dict
    _args: dict

    def _check_server(self, wanted: str) -> dict:
        """The served model's entry from `/v1/models` (waiting for a starting server)."""
        import httpx

        deadline = time.monotonic() + self.retry_for_s
        delay = 0.25
        while True:
            try:
                r = httpx.get(f"{self.base_url}/models", headers=self.headers, timeout=30)
                r.raise_for_status()
                models = r.json().get("data") or []
                break
            except (httpx.TransportError, httpx.HTTPStatusError) as e:
                if isinstance(e, httpx.HTTPStatusError) and e.response.status_code < 500:
                    raise EngineUnavailable(
                        f"server {self.base_url} refused the model list "
                        f"(HTTP {e.response.status_code}): check --api-key-env"
                    ) from None
                if time.monotonic() > deadline:
                    raise EngineUnavailable(
                        f"server {self.base_url} did not answer within {self.retry_for_s:g} s "
                        f"({type(e).__name__}: {e})"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
        by_id = {m.get("id"): m for m in models}
        entry = by_id.get(wanted)
        if entry is None:
            roots = {str(m.get("root")): m for m in models}
            entry = roots.get(str(self.preset.path)) or roots.get(str(self.preset.path.resolve()))
        if entry is None:
            raise EngineUnavailable(
                f"server {self.base_url} does not serve {wanted!r} "
                f"(it serves {', '.join(sorted(map(str, by_id))) or 'nothing'})"
            )
        want_len = self._args.get("max_model_len")
        have_len = entry.get("max_model_len")
        if want_len and have_len and int(have_len) != int(want_len):
            raise EngineUnavailable(
                f"server {self.base_url} serves {entry['id']!r} with max_model_len {have_len}, the preset says "
                f"{want_len}: start it with `murgat serve {self.preset.name}` (same arguments, same verdicts)"
            )
        return entry

    def _check_tokenizer(self, folder) -> None:
        """The tokenizer folder must be the served model's: the server reads each of its special
        tokens as one token (another family's `<start_of_turn>` would come back in pieces). Its
        tokens then are what the in-process engine breaks, as the identity assumes."""
        import httpx

        root = self.base_url.removesuffix("/v1")  # vLLM serves /tokenize beside /v1
        unknown: list[str] = []
        for i in range(0, len(self.special_tokens), _CHECK_CHUNK):
            chunk = self.special_tokens[i : i + _CHECK_CHUNK]
            try:
                r = httpx.post(
                    f"{root}/tokenize",
                    headers=self.headers,
                    timeout=60,
                    json={
                        "model": self.server_model["id"],
                        "prompt": "\n".join(chunk),
                        "add_special_tokens": False,
                        "return_token_strs": True,
                    },
                )
                r.raise_for_status()
                known = set(r.json().get("token_strs") or [])
            except (httpx.HTTPError, ValueError) as e:
                raise EngineUnavailable(
                    f"server {self.base_url}: --tokenizer {folder} could not be checked "
                    f"against its /tokenize ({type(e).__name__}: {e})"
                ) from None
            unknown += [t for t in chunk if t not in known]
        if unknown:
            shown = ", ".join(unknown[:5]) + (
                f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            )
            raise EngineUnavailable(
                f"--tokenizer {folder} is not the tokenizer of the model served at "
                f"{self.base_url}: the server does not read {shown} as one token"
            )
