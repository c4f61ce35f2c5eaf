"""Prompt templates: data files under `prompts/` (shipped as `murgat_local/prompts`), one per task.

A template has a `system` part (the instructions, identical for every item, so an engine's
prefix cache reuses it) and a `user` part with `{placeholders}` for the item's text. Values
are inserted by `str.format_map` on the template only, so braces in a response stay literal.

Untrusted text (a sentence of the answer under review, a fact a judge derived from it) sits
inside a fence the template draws: `<<<LABEL` on its own line, the value, `LABEL>>>`. Every
value is escaped on the way in so that no run of three angle brackets survives in it: text
cannot close its fence or open a new one, however it is written.
"""

from __future__ import annotations

import hashlib
import pathlib
import re
import string
import tomllib
from dataclasses import dataclass

from ..engines.presets import package_data
from .verdicts import VERDICT_TYPES, Verdict

PROMPTS_DIR = package_data("prompts")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    system: str
    user: str
    verdict: type[Verdict] | None  # None: free text or a choice, per the call
    digest: str

    @property
    def fields(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.user) if f}

    @property
    def fenced(self) -> set[str]:
        """The fields this template places inside a fence (as data, not instructions)."""
        return {m.group(2) for m in _FENCED_FIELD.finditer(self.user) if m.group(1) == m.group(3)}

    def render(self, **values: str) -> str:
        missing = self.fields - values.keys()
        if missing:
            raise KeyError(f"prompt {self.name!r} needs {sorted(missing)}")
        return self.user.format_map({k: escape_fences(v) for k, v in values.items()})


_BRACKET_RUN = re.compile(r"[<>]{3,}")
# A field alone inside a fence: <<<LABEL, a line holding only {field}, LABEL>>>.
_FENCED_FIELD = re.compile(r"<<<([A-Z_]+)\n\{(\w+)\}\n([A-Z_]+)>>>")


def escape_fences(text: str) -> str:
    """`text` with every run of three or more angle brackets spaced out (`>>>` becomes `> > >`),
    so it can neither close the fence it sits in nor draw a new one. Shorter runs (`a >> b`,
    `<b>`) are left alone."""
    return _BRACKET_RUN.sub(lambda m: " ".join(m.group(0)), text)


# A template's output, besides a verdict type: free text, or one of the call's choices.
FREE_OUTPUTS = ("text", "choice")


def load_prompt(name: str, prompts_dir: pathlib.Path = PROMPTS_DIR) -> PromptTemplate:
    path = prompts_dir / f"{name}.toml"
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))
    kind = data.get("verdict", "")
    verdict = VERDICT_TYPES.get(kind)
    if verdict is None and kind not in FREE_OUTPUTS:
        raise ValueError(
            f"{path}: verdict must be one of {sorted(VERDICT_TYPES) + list(FREE_OUTPUTS)}"
        )
    schema = verdict.schema_text() if verdict is not None else kind
    digest = hashlib.sha256(raw + schema.encode()).hexdigest()[:16]
    return PromptTemplate(name, data["system"].strip(), data["user"], verdict, digest)
