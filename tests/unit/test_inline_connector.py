"""The inline-only media connector refuses every URL but data: (the connector on its own, a local
HTTP host of media; no engine, no server)."""

from __future__ import annotations

import base64

import pytest
from support.media_host import MediaHost, png_bytes

pytestmark = pytest.mark.slow  # importing vLLM's media code takes seconds; no engine starts


def test_the_inline_only_connector_refuses_every_url_but_data(tmp_path):
    """The connector `murgat serve` gives vLLM, on its own: http(s) and file URLs are refused
    before a socket or a file is opened (sync and async paths); a data URL loads as in vLLM."""
    import asyncio

    from vllm.exceptions import VLLMValidationError

    from murgat_local.serving.connector import InlineOnlyConnector

    host = MediaHost()
    (tmp_path / "cat.png").write_bytes(png_bytes())
    try:
        connector = InlineOnlyConnector(
            allowed_local_media_path=str(tmp_path)
        )  # even where vLLM's would read
        for url in (
            f"{host.url}/cat.png",
            f"https://127.0.0.1:{host.httpd.server_address[1]}/cat.png",
            f"file://{tmp_path}/cat.png",
            "ftp://127.0.0.1/cat.png",
        ):
            with pytest.raises(VLLMValidationError, match="inline only"):
                connector.fetch_image(url)
            with pytest.raises(VLLMValidationError, match="inline only"):
                asyncio.run(connector.fetch_image_async(url))
        assert host.hits == []
        data = "data:image/png;base64," + base64.b64encode(png_bytes()).decode()
        assert connector.fetch_image(data).size == (32, 32)
    finally:
        host.close()
