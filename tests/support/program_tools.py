"""A fake toolset for program-aided plans, and an audit hook (installed once, at import) that
records file opens and exec / process / socket events while hostile plans run."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from murgat_local.generate.program import (
    Evidence,
    Span,
    ToolError,
)

_WATCHED = (
    "open",
    "exec",
    "os.system",
    "subprocess.Popen",
    "socket.connect",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "ctypes.dlopen",
    "import",
)


_AUDIT = {"on": False, "events": []}


def _audit(event: str, args: tuple) -> None:
    if _AUDIT["on"] and event in _WATCHED:
        _AUDIT["events"].append((event, repr(args)[:200]))


sys.addaudithook(_audit)


@contextmanager
def no_side_effects():
    _AUDIT["events"] = []
    _AUDIT["on"] = True
    try:
        yield
    finally:
        _AUDIT["on"] = False
    assert _AUDIT["events"] == [], f"a plan caused side effects: {_AUDIT['events']}"


class FakeTools:
    """Deterministic: find gives two spans, query describes its span, answer picks 'B'.
    A time of "0:59" raises ToolError (a recorded failed call)."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def find(self, description: str, modality: str) -> list[Span]:
        self.log.append(("find", description, modality))
        return [Span(12, 15), Span(40, 41)]

    def query(self, time, question: str, modality: str) -> Evidence:
        self.log.append(("query", str(time), question, modality))
        if str(time) == "0:59":
            raise ToolError("0:59 is past the end of the video")
        return Evidence(f"At {time} the cup is red.", str(time), modality)

    def answer(self, question: str, evidence: list, options) -> str:
        self.log.append(("answer", question, len(evidence), options))
        return "B. The cup is red."


# Two narrative plans, one of each kind.
IMPERATIVE_NARRATIVE = (
    '1. find("the man picks up the cup", "visual")\n'
    '2. describe(#1, "visual", "What colour is the cup?")\n'
    '3. describe("0:12-0:15", "audio", "What does the \\"woman\\" say?")\n'
    '4. describe(#2, "audio", "Is anything heard?")\n'
    '5. synthesize("Which option fits the evidence? Cite it by number.")\n'
)
DECLARATIVE_NARRATIVE = (
    '1. describe("0:59", "visual", "What is shown?")\n'
    '2. describe("1:02:03-1:02:09", "audio", "What is said?")\n'
    '3. synthesize("Answer.")'
)
