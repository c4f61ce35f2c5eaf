"""`murgat score` from a configuration: set a scorer up (nothing starts), then judge or plan.

Two calls, because what goes wrong in each is told apart: a model, preset or input the judges
cannot take is found while setting up, before any model starts (a usage error); anything that
stops a run is found while it runs (resumable, never a usage error).
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable

from ..config import RunConfig
from ..metrics.run_summary import RunSummary
from ..pipeline.runner import Runner, RunResult


def open_scorer(
    config: RunConfig, responses: pathlib.Path, media_root: pathlib.Path, out: pathlib.Path
) -> Runner:
    """The scorer for `responses`, its engines not started. ModelNotFound / ValueError: a model
    or preset that cannot be found, or a judge that cannot take what the input cites (as far as
    its first chunk tells)."""
    runner = Runner(config, media_root, out, summary=RunSummary)
    try:
        runner.check_input(responses)
    except ValueError:
        runner.close()
        raise
    return runner


def score(
    runner: Runner,
    responses: pathlib.Path,
    progress: Callable[[str], Callable[[int, float], None]],
    dry_run: bool = False,
    calibrate: int = 0,
) -> RunResult | dict:
    """Judge `responses` (a `RunResult`), or with `dry_run` count the calls each stage needs (the
    plan, with `calibrate` > 0 an estimate of the hours from judging that many for real); the
    engines are shut down on return."""
    runner.attach_progress(progress)
    try:
        if not dry_run:
            return runner.run(responses)
        plan = runner.plan(responses)
        if calibrate:
            plan["estimate"] = runner.estimate(responses, plan, calibrate)
        return plan
    finally:
        runner.close()
