"""A run configuration written as TOML (what `tomllib`, and so `murgat score --config`, reads).

Only the shapes a resolved configuration has: strings, numbers, booleans, lists of those, tables
of them (nested) and lists of tables (arrays of tables). None is left out: it means "the
default".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v!r} has no TOML form")
        return repr(v)
    if isinstance(v, str):
        # A JSON string is a TOML basic string (the same escapes), but for \/ which json never writes.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    if isinstance(v, Mapping):  # inside a list, or a table of tables' leaves: inline
        return (
            "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None) + "}"
        )
    raise ValueError(f"{type(v).__name__} has no TOML form")


def _tables(v: Any) -> bool:
    """A non-empty list of tables: written as an array of tables (`[[name]]`)."""
    return isinstance(v, (list, tuple)) and bool(v) and all(isinstance(x, Mapping) for x in v)


def _plain(v: Any) -> bool:
    return v is not None and not isinstance(v, Mapping) and not _tables(v)


def dumps(data: Mapping[str, Any], _prefix: tuple[str, ...] = ()) -> str:
    """TOML text for `data`: its plain values first, then each table under its header, and
    each list of tables as an array of tables."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in data.items() if _plain(v)]
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in data.items():
        path = (*_prefix, k)
        name = ".".join(_key(p) for p in path)
        if isinstance(v, Mapping) and v:
            body = dumps(v, path)
            has_plain = any(_plain(x) for x in v.values())
            header = f"[{name}]\n" if has_plain else ""
            out += ("\n" if out else "") + header + body
        elif _tables(v):
            for item in v:
                out += ("\n" if out else "") + f"[[{name}]]\n" + dumps(item, path)
    return out


__all__ = ["dumps"]
