"""`murgat generate`'s rows: what each cell writes for an item and sample, built from the chunk's
outcomes (first answers, post-hoc edits, program results), and the grading of their answers."""

from __future__ import annotations

import pathlib

from ..generate.qa import grade, grade_open, judge_call, judged, read_answer
from ..generate.strategies import posthoc_problem
from ..generate_config import GenerateConfig
from ..inputs.datasets import OPEN, DatasetItem
from ..judges.calls import Call, Outcome
from ..text.clean import remove_thinking
from .generate_cells import Cell, Item


def response_row(
    cell: Cell,
    it: Item,
    k: int,
    first: dict,
    edits: dict,
    plans: dict,
    programs: dict,
    *,
    samples: int,
    benchmark: str | None,
    from_file: pathlib.Path | None,
) -> dict:
    """The row a cell writes for sample `k` of an item, from the chunk's outcomes: the first
    answers, post-hoc edits, media plans and program results, keyed as the runner keys them."""
    item = it.item
    base = dict(item.row) if isinstance(item, DatasetItem) else {}
    rid = item.id if item.id is not None else None
    if rid is not None and samples > 1:
        rid = f"{rid}#{k}"
    row = {
        **base,
        "id": rid,
        "model": cell.label,
        "strategy": cell.strategy.label,
        "sample": k,
        "status": "ok",
        "error": None,
    }
    if isinstance(item, DatasetItem):
        row.update(
            video=item.video,
            question=item.question,
            options=list(item.options or []),
            answer=item.answer,
            question_type=item.question_type,
            categories=item.categories,
            benchmark=benchmark,
        )
        if item.images:
            row["images"] = [im.describe() for im in item.images]
        if item.answer_raw is not None and item.answer_raw != item.answer:
            row["answer_raw"] = item.answer_raw
    if it.error is not None:
        row.update(status="error", error=it.error, source=item.source)
        return row
    plan = plans[cell.model, id(it)]
    row["media"] = dict(plan.record)
    if cell.strategy.name == "posthoc":
        original, out = edits[(cell.model, cell.strategy.label, id(it), k)]
        if original is None:
            row.update(
                status="error",
                error=f"no answer to edit ({_missing(cell, it, k, first, from_file)})",
            )
            return row
        if out is None or not out.ok:
            row.update(status="error", error=f"the post-hoc edit failed: {_why(out)}")
            return row
        problem = posthoc_problem(original, out.raw)
        row["posthoc"] = {
            "source": cell.strategy.source,
            "accepted": problem is None,
            "rejected": problem,
        }
        if problem is not None:
            row["posthoc"]["edit"] = out.raw
        row["model_generation"] = out.raw if problem is None else original
        _received(row, out)
        return row
    if cell.strategy.name == "program":
        if it.data.question_type == OPEN:
            row.update(
                status="error",
                error="program-aided strategies answer multiple-choice questions only; "
                "this question is open",
            )
            return row
        return _program_row(row, cell, it, k, first, programs)
    out = first[(cell.model, cell.strategy.name, id(it), k)]
    if not out.ok:
        row.update(status="error", error=f"generation failed: {_why(out)}")
        return row
    row["model_generation"] = out.raw
    _received(row, out)
    return row


def _program_row(row: dict, cell: Cell, it: Item, k: int, first: dict, programs: dict) -> dict:
    key = (cell.model, cell.strategy.label, id(it), k)
    plan = first[key]
    row["media"]["note"] = plan.note
    if not plan.ok:
        row.update(
            status="error",
            error=f"the plan could not be written: {_why(plan)}",
            program={
                "style": cell.strategy.style,
                "variant": cell.strategy.source,
                "raw": plan.raw,
            },
        )
        return row
    result = programs[key]
    row["program"] = {**result.record, "raw": plan.raw}
    if result.error is not None:
        row.update(status="error", error=result.error)
        return row
    row["model_generation"] = result.response
    return row


def _missing(cell: Cell, it: Item, k: int, first: dict, from_file: pathlib.Path | None) -> str:
    if cell.strategy.source == "from":
        return f"id {it.item.id!r} is not in {from_file}"
    return f"the {cell.strategy.source} answer failed: " + _why(
        first.get((cell.model, cell.strategy.source, id(it), k))
    )


def _why(out: Outcome | None) -> str:
    return "no outcome" if out is None else (out.error or out.unparsed or "unknown")


def _received(row: dict, out: Outcome) -> None:
    """What the engine changed to fit the call, and the prompt tokens of each media modality
    that reached the responder (`engines.reach`; null with the reason where not counted)."""
    row["media"]["note"] = out.note
    row["media"]["reached"] = out.reached
    if out.reached_unknown:
        row["media"]["reached_unknown"] = out.reached_unknown


def grade_answers(
    rows: dict[Cell, list[dict]],
    config: GenerateConfig,
    prompts: dict,
    answerers: dict,
) -> None:
    """Grade each ok row's answer: open questions by their number or text, a letter read from the
    response, else the answer judge (`config.answer_judge`, or the cell's own model) reads it."""
    pending: dict[str, list[tuple[dict, Call]]] = {}
    for cell, cell_rows in rows.items():
        judge = config.answer_judge or cell.model
        for row in cell_rows:
            if row["status"] != "ok":
                continue
            if row.get("question_type") == OPEN:
                grade_open(row, config.number_tolerance)
                continue
            options = row.get("options") or []
            answer = read_answer(row["model_generation"], options)
            if answer is None:
                call = judge_call(
                    prompts["answer_choice"],
                    row["question"],
                    options,
                    remove_thinking(row["model_generation"]),
                )
                pending.setdefault(judge, []).append((row, call))
            else:
                grade(row, answer)
    for judge, jobs in pending.items():
        outcomes = answerers[judge].run([c for _, c in jobs])
        for (row, _), out in zip(jobs, outcomes):
            grade(row, judged(out, row.get("options") or []), judge)
