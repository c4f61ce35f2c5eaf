"""The blocks of a generation record (a line of a cell's `responses.jsonl`) that say how the
answer was made: what the responder was given (`media`), the post-hoc citing edit (`posthoc`)
and a program-aided plan with its trace (`program`).

Each block names the keys murgat writes (`Block`); a key it does not name, from an older or a
newer murgat, is kept as written rather than refused. Fields are declared in sorted order: a
record is written with its keys sorted, and `responses.reference.json` (written unsorted from
the records read back) must keep that order inside each block.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .fields import Block, Count, NonNegative, d, many

# A limit of a plan: always positive (`Limits` refuses anything else).
Positive = Annotated[int, Field(gt=0)] | Annotated[float, Field(gt=0, allow_inf_nan=False)]
# A 1-based call number.
Ordinal = Annotated[int, Field(ge=1)]
ProgramStatus = Literal["ok", "refused", "stopped", "failed", "internal"]
ErrorKind = Literal["refused", "stopped", "failed", "internal"]


class VisualGiven(Block):
    """The whole video's pictures as the responder got them."""

    as_images: bool | None = d(
        description="sent as separate timed images (a model that takes no video), not as a clip"
    )
    fps: NonNegative | None = d(description="the sampled frame rate, frames per second")
    frames: Count | None = d(description="frames sampled from the video")
    max_side: Count | None = d(description="the longest side a frame was scaled to, in pixels")


class AudioGiven(Block):
    """The whole soundtrack as the responder got it."""

    sample_rate: Count | None = d(description="its sample rate in Hz")
    seconds: NonNegative | None = d(description="its length in seconds")


class ImagesGiven(Block):
    """The images attached to the question, and whether the responder saw them."""

    attached: Count | None = d(description="images the question carries")
    missing: str | None = d(description="why they were not shown (a model that takes no images)")
    sha256: list[str] = many(list, "the shown images' SHA-256 digests, in order")
    shown: Count | None = d(description="images sent to the responder")


class MediaGiven(Block):
    """What the responder was given of the question's video and images, and what reached it."""

    audio: AudioGiven | None = d(description="the soundtrack sent (null: none)")
    audio_missing: str | None = d(description="why no soundtrack was sent")
    duration: NonNegative | None = d(description="the video's length in seconds")
    heard_audio: bool | None = d(description="the responder was sent the soundtrack")
    images: ImagesGiven | None = d(description="the question's attached images")
    note: str | None = d(description="what the engine changed to fit the call")
    reached: dict[str, Count] | None = d(
        description="prompt tokens per media modality that reached the responder"
    )
    reached_unknown: str | None = d(description="why `reached` could not be counted")
    saw_video: bool | None = d(description="the responder was sent the pictures")
    visual: VisualGiven | None = d(description="the pictures sent (null: none)")
    visual_missing: str | None = d(description="why no pictures were sent")


class PosthocEdit(Block):
    """A post-hoc cell's citing edit of an earlier answer, and whether it was kept."""

    accepted: bool | None = d(description="the edit was kept as the response")
    edit: str | None = d(description="the rejected edit's text (the original answer is kept)")
    rejected: str | None = d(description="why the edit was not kept (null: it was)")
    source: str | None = d(description="the answer edited: a strategy (base, cite) or `from`")


class ProgramFault(Block):
    """Why a plan was refused, stopped or failed, or ended by a bug in murgat itself."""

    kind: ErrorKind | None = d(
        description="refused (before running), stopped (a limit), failed (a runtime error in "
        "the plan) or internal (murgat's own bug)"
    )
    line: Count | None = d(description="the plan's line, when known")
    reason: str | None = d(description="what went wrong, in one short line")


class ToolCallRecord(Block):
    """One tool call of a plan, a failed one included."""

    args: dict[str, Any] | None = d(
        description="its arguments as passed: spans as citation text, evidence as "
        '`{"call": k}`, long texts and lists cut with their size noted; the keys depend on '
        "the tool"
    )
    error: str | None = d(description="why it failed")
    index: Ordinal | None = d(description="its place in execution order, from 1")
    line: Count | None = d(description="the plan's line that made it")
    result: str | None = d(description="a short summary of what it returned (null: it failed)")
    seconds: NonNegative | None = d(description="how long it took")
    tool: str | None = d(description="the tool: find, query, answer, describe, synthesize...")


class ProgramCounts(Block):
    """What a plan spent."""

    iterations: Count | None = d(description="loop iterations, all loops together")
    seconds: NonNegative | None = d(description="the interpreter's wall time")
    steps: Count | None = d(description="statements and expressions evaluated (narrative: lines)")
    tool_calls: Count | None = d(description="tool calls, failed ones included")


class ProgramLimits(Block):
    """The limits the plan ran under (`generate.program.Limits`, set by `program_limits`)."""

    max_bytes: Positive | None = d(description="bytes of every value it builds, counted as built")
    max_depth: Positive | None = d(description="syntax-tree nesting")
    max_int_bits: Positive | None = d(description="the widest integer, in bits")
    max_items: Positive | None = d(description="the longest list, tuple or dict it may build")
    max_iterations: Positive | None = d(description="loop iterations, all loops together")
    max_plan_lines: Positive | None = d(description="narrative plans: lines, synthesize included")
    max_record_chars: Positive | None = d(description="the plan's record as JSON, in characters")
    max_run_bytes: Positive | None = d(description="bytes of all plans of the run together")
    max_seconds: Positive | None = d(description="wall time in seconds, tools included")
    max_source_chars: Positive | None = d(description="the longest plan text parsed")
    max_steps: Positive | None = d(description="statements and expressions evaluated")
    max_string_chars: Positive | None = d(description="the longest string a plan may build")
    max_tool_calls: Positive | None = d(description="tool calls, failed ones included")
    max_tool_chars: Positive | None = d(description="text one tool call receives")
    max_value_depth: Positive | None = d(description="nesting of a value such an operation walks")
    max_work: Positive | None = d(description="elements visited by size-dependent operations")


class ProgramTrace(Block):
    """What the plan did: its calls in order, what it spent, and how it ended."""

    answer: str | None = d(description="the text of the last successful answer/synthesize call")
    calls: list[ToolCallRecord] = many(list, "its tool calls in order (`cut` says if some dropped)")
    counts: ProgramCounts | None = d(description="what it spent")
    error: ProgramFault | None = d(description="why it did not end well (null: it did)")
    imperative: bool | None = d(description="the plan finds its own spans (no times given)")
    limits: ProgramLimits | None = d(description="the limits it ran under")
    returned: str | None = d(description="logic plans: the plan's return value, rendered")
    status: ProgramStatus | None = d(description="ok, or how it ended: refused, stopped, ...")
    style: str | None = d(description="logic (a small program) or narrative (numbered steps)")


class ProgramTime(Block):
    """Where the plan's wall time went."""

    interpreter_s: NonNegative | None = d(description="the rest: the interpreter's own time")
    model_s: NonNegative | None = d(description="time spent waiting for the model's tool answers")
    wall_s: NonNegative | None = d(description="wall time of the whole run, seconds")


class RecordCut(Block):
    """How a record larger than `max_record_chars` was cut to fit."""

    calls_dropped: Count | None = d(description="tool calls dropped from the end of the trace")
    chars: Count | None = d(description="the full record's size as JSON, in characters")
    limit: Count | None = d(description="the limit it was cut to")
    strings_clipped: Count | None = d(description="long strings cut, their length noted in them")


class ProgramRecord(Block):
    """A program-aided cell's plan: its text, the checked form, the trace and its timing."""

    cut: RecordCut | None = d(description="how the record was cut to its limit (absent: whole)")
    parsed: str | list[dict[str, Any]] | None = d(
        description="the plan as the interpreter checked it: a logic program's statements "
        "written back, or a narrative plan's steps (their keys depend on the step's kind); "
        "null when it was refused"
    )
    plan: str | None = d(description="the plan's source, as taken from the model's reply")
    raw: str | None = d(description="the model's reply that held the plan")
    style: str | None = d(description="logic or narrative")
    time: ProgramTime | None = d(description="where its time went")
    trace: ProgramTrace | None = d(description="what the plan did")
    variant: str | None = d(description="declarative (times given) or imperative (found)")

    @property
    def status(self) -> str | None:
        """How the plan ended (the trace's status); None when it never ran."""
        return self.trace.status if self.trace is not None else None
