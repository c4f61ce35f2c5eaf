"""A generation record's open blocks (`media`, `posthoc`, `program`) name every key the current
murgat writes, and a line read and written again is the line that was read. Runs the real
generate runner on the sample media with the scripted planner of tests/support/program_plans.py:
a plain answer, a post-hoc edit, plans that run, fail, are refused, and one whose record is cut."""

from __future__ import annotations

import json

from support.named_keys import unnamed
from support.program_plans import PLANS, Planner, run

from murgat_local.jsonl import dumps_record
from murgat_local.results import GenerationRecord
from murgat_local.results.generation_blocks import ProgramRecord

# a logic plan whose record outgrows the limit below (its calls are dropped, its strings cut)
BIG = (
    's = "a" * 20000\nev = ["e" * 600] * 64\n'
    'for i in range(64):\n    answer(s[0:1000], ev, ["A", "B", "C", "D"])\nreturn s[0:19000]'
)
# a refused logic plan, and a narrative one the planner cannot write (its reply has not the shape)
PLANNED = dict(
    PLANS,
    **{
        "logic-declarative": "import os\nreturn 1",
        "logic-imperative": BIG,
        "narrative-imperative": "1. this is not a plan",
    },
)
STRATEGIES = [
    "base",
    "posthoc",
    "program:logic-declarative",
    "program:logic-imperative",
    "program:narrative-declarative",
    "program:narrative-imperative",
]


def test_every_generated_line_names_its_block_keys_and_writes_back_the_same(tmp_path, media_root):
    result = run(
        tmp_path,
        media_root,
        Planner(PLANNED),
        STRATEGIES,
        limit=2,
        program_limits={"max_record_chars": 60_000},
    )
    seen: dict[str, set[str]] = {"media": set(), "posthoc": set(), "program": set()}
    statuses = set()
    for path in result.outputs.values():
        for line in path.read_text(encoding="utf-8").splitlines():
            read = json.loads(line)
            rec = GenerationRecord.model_validate(read)
            dumped = rec.dump()
            for block in seen:
                value = getattr(rec, block)
                if value is not None:
                    seen[block].add(rec.strategy or "")
                    assert unnamed(value, block) == [], (block, unnamed(value, block))
                    # unsorted, as `responses.reference.json` writes it: the file's key order
                    assert json.dumps(dumped[block]) == json.dumps(read[block])
            if rec.program is not None:
                statuses.add(rec.program.status)
            assert dumps_record(rec.dump(), sort_keys=True, default=str) == line
    assert seen["media"] == set(STRATEGIES)
    assert seen["posthoc"] == {"posthoc"}
    assert len(seen["program"]) == 4
    # ran, refused before running, and never written (no trace): each read as a model
    assert statuses == {"ok", "refused", None}, statuses


def test_a_cut_program_record_is_read_with_its_cut_and_its_kept_calls(tmp_path, media_root):
    result = run(
        tmp_path,
        media_root,
        Planner(PLANNED),
        ["program:logic-imperative"],
        limit=1,
        program_limits={"max_record_chars": 60_000},
    )
    (path,) = result.outputs.values()
    (line,) = path.read_text(encoding="utf-8").splitlines()
    program = GenerationRecord.model_validate(json.loads(line)).program
    assert isinstance(program, ProgramRecord) and program.cut is not None
    assert program.trace is not None and program.trace.counts is not None
    assert program.cut.limit == 60_000 and program.trace.counts.tool_calls == 64
    assert len(program.trace.calls) == 64 - program.cut.calls_dropped
    assert program.trace.calls[0].tool == "answer" and program.trace.calls[0].index == 1
    assert program.trace.limits is not None and program.trace.limits.max_record_chars == 60_000
