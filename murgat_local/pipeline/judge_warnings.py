"""Warnings about a run's judges that change no number but should make a reader doubt one:
an even-sized majority panel (its ties decide NO), and a judge grading its own responses.

Listed in summary.json under `warnings` and printed once at the end of the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..engines.holder import EngineHolder
from .cascade import CascadeJudge
from .judging import Judge
from .panel import PanelJudge
from .routing import RoutedJudge


def even_majorities(judges: Mapping[str, Judge]) -> list[str]:
    """A majority panel with an even number of members can tie; a tie decides NO."""
    out = []
    for stage, j in judges.items():
        if not isinstance(j, PanelJudge):
            continue
        names = j.names
        if j.rule.vote == "majority" and len(names) % 2 == 0:
            out.append(
                f"{stage}: the majority panel {j.engine.name} has {len(names)} members; "
                "its ties decide NO (an odd number of members, or a weighted vote, avoids them)"
            )
    return out


def _names_of(model: str, holder: EngineHolder) -> set[str]:
    """What a judge may be called by a responder's record: the model as named, its preset's
    name, the folder its weights are in."""
    names = {model}
    preset = holder.preset
    if preset is not None:
        names |= {preset.name, preset.path.name}
    return {n.strip().lower() for n in names if n and n.strip()}


def _responder_names(model: str) -> set[str]:
    """A response's `model` as it may name a judge: whole, without `murgat generate`'s
    `/strategy` suffix, and its last path part (a hub-style `org/name`, a folder)."""
    m = model.strip()
    return {n.strip().lower() for n in (m, m.rsplit("/", 1)[0], m.rsplit("/", 1)[-1]) if n.strip()}


def self_grading(
    judges: Mapping[str, Judge], models: Mapping[str, str], responders: Iterable[str]
) -> list[str]:
    """A judge (or a panel member) that is the model whose responses it judges: one warning
    per such model, naming its stages."""
    responders = sorted(set(responders))
    stages: dict[str, list[str]] = {}
    holders: dict[str, EngineHolder] = {}
    for stage, j in judges.items():
        members: list[tuple[str, EngineHolder, str]]
        if isinstance(j, PanelJudge | CascadeJudge):
            role = "escalation judge" if isinstance(j, CascadeJudge) else "panel member"
            members = [(n, m.engine, f"{stage} ({role})") for n, m in zip(j.names, j.members)]
        elif isinstance(j, RoutedJudge):  # routed by modality: each route's judge
            members = [
                (n, rj.engine, stage if r == "mixed" else f"{stage} ({r} route)")
                for r, (n, rj) in j.judges.items()
            ]
        else:
            members = [(models.get(stage, ""), j.engine, stage)]
        for model, holder, where in members:
            stages.setdefault(model, []).append(where)
            holders.setdefault(model, holder)
    out = []
    for model, places in stages.items():
        mine = _names_of(model, holders[model])
        graded = [r for r in responders if _responder_names(r) & mine]
        if graded:
            out.append(
                f"self-grading: {model} judges {', '.join(places)} on the responses it wrote "
                f"({', '.join(graded)})"
            )
    return out


def judge_warnings(
    judges: Mapping[str, Judge], models: Mapping[str, str], responders: Iterable[str]
) -> list[str]:
    """Every warning about this run's judges (`models`: the model named for each stage)."""
    return even_majorities(judges) + self_grading(judges, models, responders)
