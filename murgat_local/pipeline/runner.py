"""`murgat score`: stream the responses through the protocol in chunks, write the artifacts.

Memory holds one chunk at a time: the summary is added up as the records are written, and all a
run keeps per response is its id (to tell duplicates) and, when it failed, its error. Every
verdict lands in the cache as soon as its batch is judged, and scores.jsonl is written to a
temporary file that replaces the old one only when the run completes: a run killed at any point
is resumed by running the same command again, and its scores.jsonl is the one an uninterrupted
run writes.
"""

from __future__ import annotations

import os
import pathlib
import time
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..config import RunConfig
from ..engines import close_all, engine_holder, load_preset
from ..engines.holder import EngineHolder
from ..inputs.responses import read_responses
from ..jsonl import dumps_record, write_json
from ..judges.human import HumanLabels, is_human
from ..judges.panel import is_panel, members_of
from ..media.segments import SegmentCutter
from ..results import ReadError, ScoreRecord, as_model, layout, read_score_records, summaries
from ..stages import PROTOCOL, Stage
from .cache import VerdictCache
from .cascade import CascadeJudge
from .judge_warnings import judge_warnings
from .judging import Judge, StageJudge
from .outputs import check_writable
from .panel import PanelJudge
from .protocol import Protocol, ProtocolOptions
from .provenance import provenance
from .records import build_record, certification_counts, stage_failures
from .routing import RoutedJudge, check_routes, cited_in
from .streaming import chunks


class RecordsSummary(typing.Protocol):
    """What a run adds its records up to as it writes them, in memory that does not grow with
    them; the layer above provides it (`metrics.run_summary.RunSummary`): the pipeline runs the
    protocol and writes the records, and imports no metric."""

    @property
    def responses(self) -> int: ...

    @property
    def models(self) -> list[str]:
        """The models the records name."""

    def add(self, record: ScoreRecord) -> None: ...

    def result(self, records: Callable[[], Iterable[ScoreRecord]]) -> dict:
        """The summary's numbers; `records()` reads the final records once more where needed."""


# Makes a run's `RecordsSummary` from the run's `group_by` and `bootstrap_resamples`.
SummaryFactory = Callable[[Sequence[str], int], RecordsSummary]


@dataclass
class RunResult:
    summary: summaries.Summary  # summary.json, as a reader of it gets it
    records_path: pathlib.Path
    summary_path: pathlib.Path
    errors: list[dict] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors or self.summary.failure else 0


def failed_calls(judges, limit: float) -> dict:
    """Unique judge calls over the run and how many got no verdict; `failure` says why the
    run fails when their share exceeds `limit`."""
    # A panel's calls are its members' (summed in its counters): a broken member fails the run
    # as it would alone, even while the rest of the panel still decides.
    total = sum(j.counters.unique for j in judges)
    failed = sum(j.counters.failed for j in judges)
    fraction = failed / total if total else 0.0
    failure = None
    if fraction > limit:
        failure = (
            f"{failed} of {total} judge calls ({fraction:.1%}) failed, were refused or did "
            f"not parse; more than --max-failed-calls {limit:g} allows"
        )
    return {
        "total": total,
        "failed": failed,
        "failed_fraction": fraction,
        "max_failed_calls": limit,
        "failure": failure,
    }


def _read_records(path: pathlib.Path) -> Iterator[ScoreRecord]:
    """The records of a finished scores.jsonl, one at a time (for the summary's intervals); this
    run wrote every line, so none is an error."""
    for rec in read_score_records(path):
        if not isinstance(rec, ReadError):
            yield rec


class Escalated:
    """summary.json's `certification[stage]`: the cascade, verdicts decided per judge and
    abstained (over the records' verdicts, as they are written), the certified target."""

    def __init__(self, config: RunConfig):
        self.stages = config.cascades()
        self.notes = config.cascade_notes()
        self.escalation = config.escalation
        self.counts: dict[str, dict] = {
            s: {"decided_by": Counter(dict.fromkeys((x.judge for x in steps), 0)), "abstained": 0}
            for s, steps in self.stages.items()
        }

    def add(self, rec: ScoreRecord) -> None:
        for stage, c in certification_counts(rec).items():
            mine = self.counts.setdefault(stage, {"decided_by": Counter(), "abstained": 0})
            mine["abstained"] += c["abstained"]
            mine["decided_by"].update(c["decided_by"])

    def result(self) -> dict:
        out: dict = {}
        escalation = self.escalation
        if escalation is None:  # no cascade, nothing escalated
            return out
        for stage, steps in self.stages.items():
            own = escalation.stage(stage)
            if own is None:  # never: a stage has a cascade only where it has a threshold
                continue
            c = self.counts[stage]
            out[stage] = {
                "decided_by": dict(c["decided_by"]),
                "abstained": c["abstained"],
                "verdicts": sum(c["decided_by"].values()) + c["abstained"],
                "judges": [s.as_dict() for s in steps],
                "target": own.target,
                "alpha": own.alpha,
                "labels": escalation.labels,
                # the thresholds are a certified cascade's (False: later judges keep nothing)
                "certified": stage not in self.notes,
            }
        return out


class Runner:
    def __init__(
        self,
        config: RunConfig,
        media_root: pathlib.Path,
        out_dir: pathlib.Path,
        *,
        summary: SummaryFactory,
        progress: Callable[[str], Callable[[int, float], None]] | None = None,
        engines: dict | None = None,
    ):
        """`summary` makes what each run adds its records up to (`metrics.run_summary.RunSummary`);
        `engines` maps a model name to a ready engine holder (`engines.holder.EngineHolder`);
        models not in it are loaded from their presets."""
        self.config = config
        self.summary = summary
        self.media_root = pathlib.Path(media_root)
        self.out_dir = pathlib.Path(out_dir)
        check_writable(self.out_dir)
        cache_path = pathlib.Path(config.cache or self.out_dir / layout.SCORE_CACHE)
        check_writable(cache_path.parent, "cache folder")
        self.cache = VerdictCache(cache_path)
        self.cutter = SegmentCutter(
            self.media_root,
            config.media.options(),
            **config.media.bounds(),
            allow_outside=tuple(config.allow_outside),
        )
        self.engines: dict[str, EngineHolder] = dict(engines or {})
        self.judges: dict[str, Judge] = {}
        panels = config.panel_rules()
        for stage, model in config.stage_models().items():
            on_progress = progress(stage) if progress else None
            if stage in panels:  # panel:M1,M2,...: a judge per member, the vote decides
                members, rule = panels[stage]
                self.judges[stage] = PanelJudge(
                    stage,
                    [(m, self._stage_judge(stage, m, member=True)) for m in members],
                    rule,
                    on_progress=on_progress,
                )
            else:
                self.judges[stage] = self._stage_judge(stage, model, on_progress)
        for stage, steps in config.cascades().items():  # --escalate-to: judges asked in turn
            first = self.judges[stage]
            self.judges[stage] = CascadeJudge(
                stage,
                [(steps[0], first)] + [(s, self._member(stage, s.judge)) for s in steps[1:]],
                on_progress=first.on_progress,
            )
        self._route_entail(config.stage_models()[Stage.ENTAIL], progress)
        self.protocol = Protocol(
            ProtocolOptions(config.compat, config.decontextualize, config.parse_reasoning),
            self.judges,
            self.cutter,
        )

    def _member(self, stage: str, model: str):
        """An escalation judge: a panel (`panel:M1,M2`) or one model, as a panel member."""
        if is_panel(model):
            members = members_of(model)
            return PanelJudge(
                stage,
                [(m, self._stage_judge(stage, m, member=True)) for m in members],
                self.config.panel.rule(stage, members),
            )
        return self._stage_judge(stage, model, member=True)

    def _stage_judge(
        self, stage: str, model: str, on_progress=None, member: bool = False
    ) -> StageJudge:
        """`model`'s judge for `stage` (as a panel member: on its own engine when it has one), on
        the engine holder the run shares for that model and engine."""
        config = self.config
        kind, options = config.member_engine(stage, model) if member else config.engine_for(stage)
        # One holder per model and engine: the run's default engine under the model's name
        # (shared with `murgat run`'s responders), a stage's other engine beside it.
        key = (
            model
            if (kind, options) == config.engine_for(None)
            else f"{model}@{kind}:{sorted(options.items())}"
        )
        if key not in self.engines and is_human(model):  # human:PATH, labels as the judge
            self.engines[key] = HumanLabels.from_model(model, config.compat)
        elif key not in self.engines:
            preset = load_preset(model, models_root=config.models_dir)
            self.engines[key] = engine_holder(
                kind,
                preset,
                config.engine_args,
                options,
                temperature=config.sampling.temperature,
                seed=config.sampling.seed,
            )
        return StageJudge(
            stage,
            self.engines[key],
            self.cache,
            batch_size=config.batch_size,
            on_progress=on_progress,
        )

    def _route_entail(self, model: str, progress) -> None:
        """Attribution judges per modality (`entailer_visual` / `entailer_audio`); each, and the
        entailer for what it keeps, is checked against what the input cites (`check_input`)."""
        routes = {
            r: (m, self._stage_judge(Stage.ENTAIL, m))
            for r, m in self.config.entail_routes().items()
        }
        main = self.judges[Stage.ENTAIL]
        self._entail_holders = None  # a panel's members are checked per call
        if isinstance(main, StageJudge):
            self._entail_holders = (
                (model, main.engine),
                {r: (m, j.engine) for r, (m, j) in routes.items()},
            )
        if routes:
            self.judges[Stage.ENTAIL] = RoutedJudge(
                Stage.ENTAIL, {**routes, "mixed": (model, main)}
            )
            if progress:
                self.judges[Stage.ENTAIL].on_progress = progress(Stage.ENTAIL)

    def check_input(self, responses: pathlib.Path) -> None:
        """ValueError, before anything is judged, when the responses a run holds first (its first
        chunk) cite a modality an attribution judge of theirs cannot take, with how many do. A
        judge is refused only for what its input cites: a response read later that cites such
        a modality has those calls refused one by one, with the reason."""
        if self._entail_holders is None:
            return
        read = read_responses(responses, self.config.limit, self.config.inputs.limits())
        first = next(chunks(read, self.config.chunk_size), [])
        check_routes(*self._entail_holders, cited_in(first, self.protocol.options))

    def attach_progress(self, progress: Callable[[str], Callable[[int, float], None]]) -> None:
        """Report each stage's progress to `progress(stage)` from now on."""
        for stage, judge in self.judges.items():
            judge.on_progress = progress(stage)

    @property
    def mode(self) -> str:
        return self.config.compat or "default"

    def plan(self, responses: pathlib.Path) -> dict[str, dict]:
        """`--dry-run`: calls per stage and how many the cache holds, computed by replaying the
        protocol with a cache-only judge (later stages can only be counted as far as the
        cache already knows the earlier stages' verdicts)."""
        from .dryrun import plan

        return plan(self, responses)

    def estimate(self, responses: pathlib.Path, counts: dict, sample: int) -> dict:
        """`--dry-run --calibrate N`: judge N responses for real and extrapolate the hours the
        whole set needs on the configured engines (see `dryrun.estimate`)."""
        from .dryrun import estimate

        return estimate(self, responses, counts, sample)

    def run(self, responses: pathlib.Path) -> RunResult:
        t0 = time.perf_counter()
        final = self.out_dir / layout.SCORES
        partial = self.out_dir / (layout.SCORES + layout.PARTIAL_SUFFIX)
        summary_path = self.out_dir / layout.SUMMARY
        # A previous run's results must not pass for this run's if this one stops early.
        for stale in (final, summary_path):
            stale.unlink(missing_ok=True)
        totals = self.summary(self.config.group_by, self.config.bootstrap_resamples)
        errors: list[dict] = []
        failures = dict.fromkeys(PROTOCOL, 0)
        escalated = Escalated(self.config)
        with partial.open("w", encoding="utf-8") as out:
            for chunk in chunks(
                read_responses(responses, self.config.limit, self.config.inputs.limits()),
                self.config.chunk_size,
            ):
                for state in self.protocol.run(chunk):
                    rec = build_record(state, self.mode, self.config.number_tolerance)
                    out.write(dumps_record(rec.dump(), sort_keys=True) + "\n")
                    for stage, n in stage_failures(rec).items():
                        failures[stage] += n
                    escalated.add(rec)
                    totals.add(rec)
                    if rec.status != "ok":
                        errors.append(
                            {
                                "index": rec.index,
                                "id": rec.id,
                                "source": rec.source,
                                "error": rec.error,
                            }
                        )
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, final)
        # The intervals read the final records back (none is kept in memory).
        summary = totals.result(lambda: _read_records(final))
        summary["mode"] = self.mode
        summary["unparsed_verdicts"] = failures
        summary["errors_list"] = errors
        summary["stages"] = {s: j.counters.as_dict() for s, j in self.judges.items()}
        if escalated.stages:
            summary["certification"] = escalated.result()
        summary["judge_calls"] = calls = failed_calls(
            self.judges.values(), self.config.max_failed_calls
        )
        summary["failure"] = calls.pop("failure")
        if not totals.responses:  # nothing was scored: not a success
            summary["failure"] = "the input holds no responses"
        summary["engines"] = {
            name: {"identity": e.identity, "started": e.started, **e.stats.as_dict()}
            for name, e in self.engines.items()
        }
        summary["models"] = self.config.stage_models()
        if self.config.entail_routes():  # each route's calls: summary["stages"]["entail"]["routes"]
            summary["entail_routes"] = self.config.entail_routes()
        warnings = judge_warnings(self.judges, summary["models"], totals.models)
        summary["warnings"] = warnings + list(self.config.cascade_notes().values())
        summary["segments_decoded"] = self.cutter.decoded
        summary["cache"] = {
            "path": str(self.cache.path),
            "set_aside": str(self.cache.set_aside) if self.cache.set_aside else None,
            "rejected_rows": sum(j.counters.cache_rejected for j in self.judges.values()),
        }
        summary["provenance"] = provenance(self, responses)
        summary["wall_s"] = round(time.perf_counter() - t0, 3)
        written = write_json(summary_path, summaries.Summary.model_validate(summary))
        return RunResult(as_model(summaries.Summary, written), final, summary_path, errors)

    def close(self) -> None:
        close_all(self.engines.values())
        self.cutter.close()
        self.cache.close()
