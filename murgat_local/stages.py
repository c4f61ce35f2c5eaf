"""The stages of the MURGAT protocol, named once.

A `Stage` is a `StrEnum`: it is its own name as a string, so cache keys, summary.json, records,
TOML configuration and prompt-file names read and write exactly the strings they always did
(`json.dumps(Stage.ENTAIL) == '"entail"'`, `f"{Stage.ENTAIL}" == "entail"`). The lowest layer:
every other layer names stages, and this module imports nothing of the package.
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    DECONTEXT = "decontext"  # rewrite each sentence to stand on its own (or the whole text)
    VERIFIABLE = "verifiable"  # subtask 1: is the sentence a verifiable claim
    DECOMPOSE = "decompose"  # subtask 2: the sentence's atomic facts
    ENTAIL = "entail"  # subtask 3: do the cited segments entail the fact
    # Not a step of its own: the citations' necessity, read from entail calls (alone / without),
    # a set of yes/no judgements that meta-evaluation calibrates against people's labels.
    PRECISE = "precise"


# The stages `murgat score` runs, in order (each has a judge and a model).
PROTOCOL: tuple[Stage, ...] = (Stage.DECONTEXT, Stage.VERIFIABLE, Stage.DECOMPOSE, Stage.ENTAIL)
# The stages whose verdict is yes/no: a panel votes on them, a cascade certifies them.
YES_NO: tuple[Stage, ...] = (Stage.VERIFIABLE, Stage.ENTAIL)


__all__ = ["PROTOCOL", "YES_NO", "Stage"]
