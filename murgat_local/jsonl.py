"""JSON text for records and summaries that can always be written as UTF-8.

Every JSON writer (scores.jsonl, summary.json, `murgat segment`, `murgat rescore --out`) goes
through `dumps_record`, so no string can stop a run from writing its records. Characters are
written as themselves (`ensure_ascii=False`); JSON escapes NUL and the other control
characters. A surrogate code point, which UTF-8 cannot encode, is written as U+FFFD: the
readers already replace them (see `inputs.responses`), so one reaching a writer came from
elsewhere, and it is replaced the same way instead of failing the write.
"""

from __future__ import annotations

import json
import pathlib

from .inputs.responses import replace_surrogates
from .results.versions import Versioned


def dumps_record(obj: object, **kwargs) -> str:
    """`json.dumps(obj, ensure_ascii=False, **kwargs)` that never fails on a string.

    Args:
        obj: the record or summary.
        kwargs: passed to `json.dumps` (`sort_keys`, `indent`, `default`, ...).
    """
    text, _ = replace_surrogates(json.dumps(obj, ensure_ascii=False, **kwargs))
    return text


def write_json(path: pathlib.Path, obj: Versioned) -> dict:
    """Write a summary (`results.Summary`, `RunSummary`) as indented JSON, keys sorted; returns
    the object written."""
    data = obj.dump()
    path.write_text(dumps_record(data, indent=2, sort_keys=True, default=str), encoding="utf-8")
    return data
