"""What a file's `schema_version` says, and the rule for reading one.

Every record and summary murgat writes carries `schema_version` (an int). A file written before
the field existed has none: it is read as version 0, which has the shape of version 1 without the
field. A version newer than `CURRENT` is never guessed at: reading it is an error that names the
version, so an old murgat never reads a new file wrongly and silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

CURRENT = 1
# Version 0: the files of murgat before `schema_version`, the same shape without the field.
READABLE = (0, 1)


class Versioned(BaseModel):
    """A record or summary as written: each key that was written is kept (`dump` writes back
    exactly the keys that were read or set), and no key the schema does not name is accepted."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = CURRENT

    def dump(self) -> dict:
        """The JSON object to write: the keys that were set, at the current schema version."""
        # Python values: the writer's JSON encoder turns what JSON has no type for into text.
        out = self.model_dump(exclude_unset=True)
        out["schema_version"] = CURRENT
        return out


def version_of(data: Mapping) -> int | str:
    """The object's schema version (0 when it has none), or why it has no readable one."""
    v = data.get("schema_version", 0)
    if isinstance(v, bool) or not isinstance(v, int):
        return f"schema_version is {v!r}, not an integer"
    if v > CURRENT:
        return (
            f"schema_version {v} is newer than this murgat reads (up to {CURRENT}): "
            "read it with a newer murgat"
        )
    if v not in READABLE:
        return f"schema_version {v} is not one murgat ever wrote (it reads {READABLE})"
    return v


M = TypeVar("M", bound=Versioned)


def validate(model: type[M], data: object, what: str) -> M | str:
    """`data` as `model`, or why not (naming its schema version and the fields at fault)."""
    if not isinstance(data, dict):
        return f"not a {what} (a JSON {type(data).__name__}, not an object)"
    version = version_of(data)
    if isinstance(version, str):
        return version
    try:
        return model.model_validate(data)
    except ValidationError as e:
        return f"not a schema_version {version} {what}: {describe(e)}"


def describe(error: ValidationError, most: int = 3) -> str:
    """The first problems of a validation error, each as `where: what`."""
    parts = []
    for item in error.errors()[:most]:
        where = ".".join(str(p) for p in item["loc"]) or "(the object)"
        msg = "unknown field" if item["type"] == "extra_forbidden" else item["msg"]
        parts.append(f"{where}: {msg}")
    more = error.error_count() - most
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
