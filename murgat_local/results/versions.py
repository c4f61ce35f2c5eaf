"""What a file's `schema_version` says, and the rule for reading one.

Every record and summary murgat writes carries `schema_version` (an int). A file written before
the field existed has none: it is read as version 0, which has the shape of version 1 without the
field. A version newer than `CURRENT` is never guessed at: reading it is an error that names the
version, so an old murgat never reads a new file wrongly and silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema

CURRENT = 1
# Version 0: the files of murgat before `schema_version`, the same shape without the field.
READABLE = (0, 1)


class Versioned(BaseModel):
    """A record or summary as written: each key that was written is kept (`dump` writes back
    exactly the keys that were read or set), and no key the schema does not name is accepted.
    Strict: a value of the wrong JSON type is refused, never converted ("1e3" is no number,
    "yes" no boolean)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    schema_version: int = Field(
        CURRENT,
        ge=0,
        le=CURRENT,
        description=f"the version of this file's schema (now {CURRENT}; none: version 0)",
    )

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The JSON Schema of the file, as strict as the model: an object whose keys must match
        a pattern takes no other key."""
        kwargs.setdefault("schema_generator", _Schema)
        return super().model_json_schema(*args, **kwargs)

    def dump(self) -> dict:
        """The JSON object to write: the keys that were set, at the current schema version."""
        # Python values: the writer's JSON encoder turns what JSON has no type for into text.
        out = self.model_dump(exclude_unset=True)
        out["schema_version"] = CURRENT
        return out


class _Schema(GenerateJsonSchema):
    def dict_schema(self, schema: Any) -> dict[str, Any]:
        out = super().dict_schema(schema)
        if "patternProperties" in out:
            out["additionalProperties"] = False
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
        return f"not a schema_version {version} {what}: {describe(e, data)}"


def as_model(model: type[M], data: Mapping | M) -> M:
    """What this process built (a dict on its way to a file) as the model a reader of the file
    would get: the same JSON round trip and the same strict checks. A value the schema refuses is
    murgat's own bug, raised here, not a reader's error."""
    if isinstance(data, model):
        return data
    # json.dumps + loads: tuples become lists and paths text, as written to the file.
    text = json.dumps(data, default=str, allow_nan=False)
    return model.model_validate_json(text)


def describe(error: ValidationError, data: object = None, most: int = 3) -> str:
    """The first problems of a validation error, each as `where: what (got VALUE)`; the branches
    of a union (a score is an int or a float) are one problem at one place."""
    found: dict[str, list[str]] = {}
    got: dict[str, object] = {}
    for item in error.errors():
        where = _path(item["loc"], data)
        msg = "unknown field" if item["type"] == "extra_forbidden" else item["msg"]
        if msg not in found.setdefault(where, []):
            found[where].append(msg)
        got.setdefault(where, item.get("input"))
    parts = []
    for where, msgs in list(found.items())[:most]:
        text = f"{where}: {' or '.join(msgs)}"
        if msgs != ["unknown field"]:
            text += f" (got {_short(got[where])})"
        parts.append(text)
    more = len(found) - most
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _path(loc: tuple, data: object) -> str:
    """`loc` as the keys and indices of `data` it walks through: what pydantic adds to name a
    union's branch (`constrained-int`, a model's name) or a key's check (`[key]`) is not one."""
    steps = []
    for part in loc:
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            continue
        steps.append(str(part))
    return ".".join(steps) or "(the object)"


def _short(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
