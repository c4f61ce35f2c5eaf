"""`murgat segment`: what `murgat score` with a configuration judges of each response (the
sentences, what the judges read of each, their citations), with no model and no media."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

from ..config import RunConfig
from ..inputs.responses import InputError, read_responses
from ..text.segment import segment


def segment_responses(config: RunConfig, responses: pathlib.Path) -> Iterator[dict]:
    """One dict per response read under `config` (its limit and input limits): its index, id,
    source and segmentation, or, for a response that cannot be read, the reason."""
    for item in read_responses(responses, config.limit, config.inputs.limits()):
        if isinstance(item, InputError):
            yield {"index": item.index, "id": item.id, "error": item.reason, "source": item.source}
            continue
        seg = segment(
            item.generation,
            compat=config.compat,
            parse_reasoning=config.parse_reasoning,
            decontextualize=config.decontextualize,
            decontextualized_text=item.record.get("decontextualized_text"),
        )
        yield {"index": item.index, "id": item.id, "source": item.source, **seg.to_dict()}
