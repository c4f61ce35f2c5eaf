"""A command's options, built from their declarations (`cli/options.py`) and the configuration's
fields, as vLLM builds its engine flags from `EngineArgs`: `@takes("score")` gives the command
function every option `score` takes, with the field's type, bounds, choices and default, and
hands the function what the flags set as configuration overrides (`Given`).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

import murgat_local.cli.ui as ui

from ..config import RunConfig
from ..config_errors import bounds_of, worded
from ..config_errors import field_at as config_field_at
from ..generate_config import GenerateConfig
from ..meta_config import MetaEvalOptions
from .options import GENERATE, META, SCORE, Option, for_command

CONFIGS: dict[str, type[BaseModel]] = {
    SCORE: RunConfig,
    GENERATE: GenerateConfig,
    META: MetaEvalOptions,
}
# The configurations each command loads.
LOADS: dict[str, tuple[str, ...]] = {
    "score": (SCORE,),
    "segment": (SCORE,),
    "cut": (SCORE,),
    "rescore": (SCORE,),
    "generate": (GENERATE,),
    "program run": (GENERATE,),
    "run": (SCORE, GENERATE),
    "meta-eval": (META,),
}


def field_at(model: type[BaseModel], key: str) -> FieldInfo | None:
    """The field a dotted key names under `model` (None: the model has no such key)."""
    return config_field_at(model, tuple(key.split(".")))


def _field(option: Option) -> FieldInfo:
    for model in CONFIGS.values():
        found = field_at(model, option.keys[0])
        if found is not None:
            return found
    raise LookupError(f"{option.flag}: no configuration has the key {option.keys[0]!r}")


def _plain(annotation: Any) -> Any:
    """The annotation without None (`int | None`: int)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def default_of(option: Option) -> Any:
    """The configuration's default for the option's key (None: it has none)."""
    if not option.keys:
        return option.default
    f = _field(option)
    if f.default_factory is not None:
        return f.default_factory()  # type: ignore[call-arg]
    return None if f.default is PydanticUndefined else f.default


def _shown(value: Any) -> str | None:
    if value is None or value == [] or isinstance(value, bool):
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _help(text: str, bounds: str | None, default: str | None) -> str:
    said = "; ".join(filter(None, [bounds, default and f"default: {default}"]))
    return f"{text} ({said})" if said else text


@dataclass(frozen=True)
class Built:
    """An option as one command takes it: the parameter's type and its typer declaration."""

    option: Option
    param: str
    annotation: Any
    info: Any


def build(option: Option, command: str) -> Built:
    """`option` as `command` takes it."""
    variant = option.variant(command)
    required = option.required if variant.required is None else variant.required
    text = variant.help or option.help
    kw: dict[str, Any] = {"envvar": option.envvar} if option.envvar else {}
    if not option.keys:
        kind = option.kind
        default = ... if required else option.default
        shown = _shown(default) if default is not ... else None
        annotation: Any = kind if required or default is not None else kind | None
        help_ = _help(text, None, shown if kind is not bool else None)
        return Built(
            option, option.name, annotation, typer.Option(default, option.flag, help=help_, **kw)
        )
    f = _field(option)
    kind = _plain(f.annotation)
    shown = _shown(default_of(option)) if option.switch is None else None
    help_ = _help(text, bounds_of(f), shown)
    name = "opt_" + option.flag.lstrip("-").replace("-", "_")
    if option.switch is not None:
        return Built(option, name, bool, typer.Option(False, option.flag, help=help_, **kw))
    if typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind)
        default = ... if required else []
        info = typer.Option(default, option.flag, help=help_, **kw)
        return Built(option, name, list.__class_getitem__(_plain(item)), info)
    if typing.get_origin(kind) is Literal:  # checked with the other keys: `refusal`
        kind = str
    default = ... if required else None
    annotation = kind if required else kind | None
    return Built(option, name, annotation, typer.Option(default, option.flag, help=help_, **kw))


def refusal(option: Option, value: Any) -> str | None:
    """Why the configuration would refuse `value` for the option's key, in the words a refused
    key of a TOML file gets (`--limit (key limit): must be >= 1, got -1`); None: it takes it."""
    if value is None or option.switch is not None:
        return None
    f = _field(option)
    try:
        typed: Any = f.annotation
        if f.metadata:  # the field's bounds, as pydantic reads them from `Annotated`
            typed = Annotated.__class_getitem__((f.annotation, *f.metadata))  # type: ignore[attr-defined]
        TypeAdapter(typed).validate_python(value)
    except ValidationError as e:
        said = worded(e.errors()[0], f)
        return f"{option.flag} (key {option.keys[0]}): {said}, got {value!r}"
    return None


@dataclass
class Given:
    """What a command's flags set, as overrides of each configuration it loads (None: not set)."""

    overrides: dict[str, dict] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)

    def set(self, option: Option, command: str, value: Any) -> None:
        if option.switch is not None:
            value = option.switch if value else None
        elif isinstance(value, list) and not value:
            value = None
        self.flags[option.flag] = value
        to = option.variant(command).to or option.to or LOADS[command]
        for name in LOADS[command]:
            if name not in to:
                continue
            for key in option.keys:
                if field_at(CONFIGS[name], key) is None:
                    continue
                *tables, last = key.split(".")
                target = self.overrides.setdefault(name, {})
                for t in tables:
                    target = target.setdefault(t, {})
                target[last] = value

    def of(self, config: str) -> dict:
        """The overrides of one configuration (`score` or `generate`)."""
        return self.overrides.get(config, {})

    def value(self, flag: str) -> Any:
        """What `flag` set (None: not given)."""
        return self.flags.get(flag)


def takes(command: str) -> Callable[[Callable], Callable]:
    """Give the decorated command function `command`'s options. Its own parameters come first;
    an option with no key arrives under its name (`out`, `media_root`), the others in `given`."""

    def wrap(fn: Callable) -> Callable:
        built = [build(o, command) for o in for_command(command)]
        keyless = {b.param for b in built if not b.option.keys}
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.name not in keyless | {"given"}]
        made = [
            inspect.Parameter(
                b.param, inspect.Parameter.KEYWORD_ONLY, default=b.info, annotation=b.annotation
            )
            for b in built
        ]
        wants_given = "given" in sig.parameters

        @functools.wraps(fn)
        def command_fn(**kwargs: Any) -> Any:
            given = Given()
            for b in built:
                value = kwargs.pop(b.param)
                if b.option.keys:
                    if (why := refusal(b.option, value if value != [] else None)) is not None:
                        ui._fail(why)
                    given.set(b.option, command, value)
                else:
                    kwargs[b.param] = value
            return fn(**kwargs, given=given) if wants_given else fn(**kwargs)

        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + made
        command_fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        hints = typing.get_type_hints(fn)
        command_fn.__annotations__ = {p.name: hints.get(p.name, p.annotation) for p in own} | {
            b.param: b.annotation for b in built
        }
        return command_fn

    return wrap
