"""The media connector `vllm serve` runs with when `murgat serve` starts it: inline data only.

vLLM's own connector fetches any http(s) URL a client names (an empty `--allowed-media-domains`
allows every host) and reads `file:` URLs under `--allowed-local-media-path`. A judge's server
needs neither: the scorer sends every image, clip and waveform inline. So a `data:` URL is read
as vLLM reads it, and any other URL is refused before a socket or a file is opened; the client
gets a 400 naming the rule. Imported (which registers it) by `serving.entry` inside the server's
processes; the launcher selects it with `VLLM_MEDIA_CONNECTOR`. A process where it was never
registered fails the request on vLLM's unknown-connector assertion: closed, never fetching.
"""

from __future__ import annotations

from vllm.exceptions import VLLMValidationError
from vllm.multimodal.media import MEDIA_CONNECTOR_REGISTRY, MediaConnector

from .launcher import MEDIA_CONNECTOR


def _inline_only(url: str) -> None:
    if url[:5].lower() != "data:":
        scheme = url.partition(":")[0][:16] if ":" in url else "no scheme"
        raise VLLMValidationError(
            f"this server takes media inline only (base64 data: URLs, input_audio); it fetches "
            f"no URL and reads no file ({scheme!r} URL refused)",
            parameter="url",
        )


@MEDIA_CONNECTOR_REGISTRY.register(MEDIA_CONNECTOR)
class InlineOnlyConnector(MediaConnector):
    def load_from_url(self, url: str, media_io, *, fetch_timeout: int | None = None):
        _inline_only(url)
        return super().load_from_url(url, media_io, fetch_timeout=fetch_timeout)

    async def load_from_url_async(self, url: str, media_io, *, fetch_timeout: int | None = None):
        _inline_only(url)
        return await super().load_from_url_async(url, media_io, fetch_timeout=fetch_timeout)
