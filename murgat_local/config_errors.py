"""What is wrong with a configuration, as values: each refused key, where it came from (an
override, i.e. a command-line flag, or the TOML file), the allowed range and the given value.

pydantic's own message names a model, a type code and a URL; a user wrote a flag or a key.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

_MISSING = object()
_BOUNDS = (
    (annotated_types.Ge, "ge", ">="),
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Le, "le", "<="),
    (annotated_types.Lt, "lt", "<"),
)


@dataclass(frozen=True)
class Problem:
    """One refused key. `key` is dotted as in the TOML file (`sampling.temperature`); `file` is
    the file that set it, None when an override (a flag) did; `given` is the value refused, or
    None when the key was missing (`has_given` says which)."""

    key: str
    message: str
    given: Any
    has_given: bool
    file: pathlib.Path | None

    def line(self, flag_of: dict[str, str]) -> str:
        """`--limit (key limit): must be >= 1, got -1`, or `run.toml: key limit: ...` (a file's
        key), or the message alone where no key is at fault (a rule across keys)."""
        got = f", got {self.given!r}" if self.has_given else ""
        if not self.key:
            where = f"{self.file}: " if self.file else ""
            return f"{where}{self.message}{got}"
        if self.file is None:
            return f"{_flag(self.key, flag_of)} (key {self.key}): {self.message}{got}"
        return f"{self.file}: key {self.key}: {self.message}{got}"


def _flag(key: str, flag_of: dict[str, str]) -> str:
    """The flag that sets `key` (`models.1`, one of a repeated flag's values: --model)."""
    named = ".".join(p for p in key.split(".") if not p.isdigit())
    return flag_of.get(named) or "--" + named.rsplit(".", 1)[-1].replace("_", "-")


def field_at(model: type[BaseModel] | None, loc: tuple) -> Any:
    """The pydantic field at `loc` under `model` (None where the path leaves the models)."""
    field = None
    for part in loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        field = model.model_fields[part]
        ann = field.annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return field


def bounds_of(field: Any) -> str | None:
    """A pydantic field's bounds as a refusal and `--help` say them (`>= 0 and <= 2`)."""
    bounds = [
        f"{sign} {getattr(m, attr)}"
        for kind, attr, sign in _BOUNDS
        for m in field.metadata
        if isinstance(m, kind)
    ]
    return " and ".join(bounds) or None


def worded(error: ErrorDetails, field: Any) -> str:
    """pydantic's refusal of a value in the words a user reads: the field's range where a bound
    was broken, "unknown key", "required", or pydantic's message without its prefix."""
    kind = error["type"]
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        allowed = bounds_of(field) if field is not None else None
        if allowed:
            return f"must be {allowed}"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required"
    msg = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg[:1].lower() + msg[1:]


def _overridden(overrides: dict, loc: tuple) -> bool:
    """Whether an override (a flag) gave the value at `loc`."""
    value: Any = overrides
    for part in loc:
        if isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        elif isinstance(value, dict) and value.get(part) is not None:
            value = value[part]
        else:
            return False
    return True


class ConfigError(ValueError):
    """A configuration refused: every `Problem`, one line each."""

    def __init__(self, found: list[Problem]):
        super().__init__("; ".join(p.line({}) for p in found))
        self.problems = found


def problems(
    error: ValidationError,
    model: type[BaseModel],
    overrides: dict,
    file: pathlib.Path | None,
    table: tuple[str, frozenset[str]] = ("", frozenset()),
) -> list[Problem]:
    """Each of `error`'s refusals as a `Problem`. `overrides` are what the flags set (a key there
    is the flag's fault, else the file's); `table` is the file's table `model` is read from and
    the keys it holds (`generate`, for `[generate]`): those keys are named under it."""
    found = []
    for e in error.errors():
        loc = tuple(p for p in e["loc"] if isinstance(p, str | int))
        from_flag = bool(loc) and _overridden(overrides, loc)
        given = e.get("input", _MISSING) if e["type"] != "missing" else _MISSING
        if not loc:  # a rule across keys: the values are the whole table, not worth printing
            given = _MISSING
        under = not from_flag and bool(loc) and loc[0] in table[1]
        key = ".".join(str(p) for p in ((table[0], *loc) if under else loc))
        found.append(
            Problem(
                key=key,
                message=worded(e, field_at(model, loc)),
                given=None if given is _MISSING else given,
                has_given=given is not _MISSING,
                file=None if from_flag else file,
            )
        )
    return found
