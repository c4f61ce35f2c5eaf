"""`murgat generate`: responders answer a dataset under each strategy, batched and cached.

A grid of cells (models x strategies, K samples each) runs chunk by chunk over the dataset.
Inside a chunk, every cell's calls go to its model's engine together (one engine per model,
shared by the cells, the answer judge and, in `murgat run`, the scorer), through the same
content-addressed cache and batch machinery as the judges: a killed run resumes with the same
output, and a finished one reruns from the cache without starting a model.
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Callable
from functools import partial

from pydantic import ValidationError

from ..engines import Sampling, close_all, engine_holder, load_preset
from ..generate.images import attach, images_note, with_images
from ..generate.media import ResponderPlan, cut_media, media_note, plan_media
from ..generate.program_tools import TOOL_PROMPTS
from ..generate.strategies import parse_strategy
from ..generate_config import GenerateConfig
from ..inputs.benchmarks import Dataset, open_dataset
from ..inputs.datasets import OPEN, DatasetItem, render_options
from ..inputs.responses import InputError, read_responses
from ..inputs.subsets import Subset, choose
from ..jsonl import dumps_record, write_json
from ..judges import load_prompt
from ..judges.calls import Call, Outcome
from ..media.segments import SegmentCutter
from ..media.source import MediaError
from ..results import (
    GenerationRecord,
    GenerationSummary,
    ReadError,
    as_model,
    layout,
    read_generation_records,
)
from ..results.versions import describe
from ..text.clean import remove_thinking
from .cache import VerdictCache
from .generate_cells import Cell, GenerateResult, Item, output_layout
from .generate_rows import grade_answers, response_row
from .generation_summary import Grades, summarize
from .judging import StageJudge
from .outputs import check_writable
from .programs import ProgramJob, ProgramResult, execute, plan_pattern
from .streaming import chunks

# The fields of each row the summary grades (`generation_summary.summarize`).
_KEPT = ("id", "status", "error", "gold", "predicted", "answer_path", "correct", "question_type")


def _recorded(row: dict) -> GenerationRecord:
    """The row as its schema reads it; a row the schema refuses (a value murgat should never
    have written) is kept as that answer's error, naming the key, and the run goes on."""
    try:
        return GenerationRecord.model_validate(row)
    except ValidationError as e:
        why = f"the answer could not be recorded: {describe(e, row)}"
        named = ("id", "model", "strategy", "sample", "source")
        keep = {k: row[k] for k in named if row.get(k) is not None}
        for given in (keep, {}):  # what names the answer, when those values are fit to keep
            try:
                return GenerationRecord.model_validate({**given, "status": "error", "error": why})
            except ValidationError:
                continue
        raise AssertionError("an error record with no other key is always valid") from e


class GenerateRunner:
    def __init__(
        self,
        config: GenerateConfig,
        media_root: pathlib.Path,
        out: pathlib.Path,
        *,
        grades: Grades,
        engines: dict | None = None,
        cache: VerdictCache | None = None,
        cutter: SegmentCutter | None = None,
        from_file: pathlib.Path | None = None,
        progress: Callable[[str], Callable[[int, float], None]] | None = None,
    ):
        """`grades` grades the rows for the summary (`metrics.run_summary.GenerationGrades`);
        `engines` maps a model name to a shared engine holder (`engines.holder.EngineHolder`);
        the others are created from presets. ValueError / ModelNotFound for a bad grid or model
        (usage)."""
        self.config = config
        self.grades = grades
        self.media_root = pathlib.Path(media_root)
        self.from_file = from_file
        self.cells = [
            Cell(m, parse_strategy(s, from_file=from_file is not None))
            for m in config.models
            for s in config.strategies
        ]
        if len({c.label for c in self.cells}) != len(self.cells):
            raise ValueError("the same model and strategy are named twice")
        self.paths, self.summary_path, default_cache = output_layout(pathlib.Path(out), self.cells)
        for folder in {p.parent for p in self.paths.values()} | {self.summary_path.parent}:
            check_writable(folder)
        if cache is None:
            check_writable(pathlib.Path(config.cache or default_cache).parent, "cache folder")
        self.cache = cache or VerdictCache(config.cache or default_cache)
        self.cutter = cutter or SegmentCutter(
            self.media_root,
            config.media.options(),
            **config.media.bounds(),
            allow_outside=tuple(config.allow_outside),
        )
        self.engines: dict = dict(engines or {})
        kind, transport = config.engine_for(None)
        for name in [*config.models, *([config.answer_judge] if config.answer_judge else [])]:
            if name not in self.engines:
                preset = load_preset(name, models_root=config.models_dir)
                self.engines[name] = engine_holder(
                    kind, preset, config.engine_args, transport, seed=config.sampling.seed
                )
        self.judges = {
            n: StageJudge(
                "generate",
                e,
                self.cache,
                batch_size=config.batch_size,
                on_progress=progress(f"{n}") if progress else None,
            )
            for n, e in self.engines.items()
            if n in config.models
        }
        self.answerers = {
            n: StageJudge("answer", e, self.cache, batch_size=config.batch_size)
            for n, e in self.engines.items()
        }
        self.toolers = {
            n: StageJudge("program", e, self.cache, batch_size=config.batch_size)
            for n, e in self.engines.items()
            if n in config.models
        }
        self.limits = config.limits()
        programs = [c.strategy for c in self.cells if c.strategy.name == "program"]
        self.prompts = {
            name: load_prompt(name)
            for name in (
                "respond_base",
                "respond_cite",
                "respond_base_open",
                "respond_cite_open",
                "posthoc_attribution",
                "answer_choice",
                *(s.prompt for s in programs),
                *(TOOL_PROMPTS if programs else ()),
            )
        }
        self._sources = self._read_from_file() if from_file else {}
        self.benchmark: str | None = None  # the dataset's name, set by `run`
        self.subset: Subset | None = None  # the drawn subset (`--sample`), set by `run`

    # ------------------------------------------------------------------ inputs

    def _read_from_file(self) -> dict[str, str]:
        """`--from FILE`: the answers a posthoc pass edits, by id."""
        found: dict[str, str] = {}
        if self.from_file is None:
            return found
        for item in read_responses(self.from_file, None, self.config.inputs.limits()):
            if not isinstance(item, InputError):
                found[item.id] = item.generation
        return found

    def _prepare(self, item: DatasetItem | InputError) -> Item:
        if isinstance(item, InputError):
            return Item(item, error=item.reason)
        try:
            return Item(item, ref=self.cutter.source(item.video))
        except MediaError as e:
            return Item(item, error=str(e))
        except Exception as e:  # any fault stays with its item
            return Item(item, error=f"failed while preparing: {type(e).__name__}: {e}")

    # ------------------------------------------------------------------ calls

    def _sampling(self, model: str, k: int) -> Sampling:
        s = self.config.sampling
        budget = s.thinking_budget if self.engines[model].preset.quirks.thinking else 0
        return Sampling(
            max_tokens=s.max_tokens + budget,
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k,
            seed=s.seed + k,
        )

    def _call(
        self,
        prompt: str,
        model: str,
        it: Item,
        plan: ResponderPlan,
        k: int,
        pattern: str | None = None,
        **extra,
    ) -> Call:
        item = it.data
        if item.question_type == OPEN and f"{prompt}_open" in self.prompts:
            prompt = f"{prompt}_open"
        tpl = self.prompts[prompt]
        user = tpl.render(
            media_note=media_note(plan.record) + images_note(plan.record),
            question=item.question,
            options=render_options(item.options),
            **extra,
        )
        cutter, ref = self.cutter, it.video
        media = with_images(
            lambda: cut_media(cutter, ref, plan), plan, item.images, self.config.inputs.limits()
        )
        return Call(
            tpl,
            user,
            media_keys=plan.keys,
            media=media,
            sampling=self._sampling(model, k),
            captions=plan.captions,
            pattern=pattern,
        )

    def _generate(self, model: str, jobs: list[tuple[tuple, Call]]) -> dict[tuple, Outcome]:
        if not jobs:
            return {}
        outcomes = self.judges[model].run([call for _, call in jobs])
        return {key: out for (key, _), out in zip(jobs, outcomes)}

    # ------------------------------------------------------------------ one chunk

    def _chunk(self, chunk: list[DatasetItem | InputError]) -> dict[Cell, list[dict]]:
        items = [self._prepare(i) for i in chunk]
        live = [it for it in items if it.error is None]
        plans = {(m, id(it)): self._plan(m, it) for m in self.config.models for it in live}
        samples = range(self.config.samples)
        # Phase A: first answers (base, cite, and the sources posthoc cells edit).
        first: dict[tuple, Outcome] = {}
        for model in self.config.models:
            wanted = {
                c.strategy.name
                for c in self.cells
                if c.model == model and c.strategy.name in ("base", "cite")
            }
            wanted |= {
                c.strategy.source
                for c in self.cells
                if c.model == model
                and c.strategy.name == "posthoc"
                and c.strategy.source is not None
                and c.strategy.source != "from"
            }
            jobs = [
                (
                    (model, s, id(it), k),
                    self._call(f"respond_{s}", model, it, plans[model, id(it)], k),
                )
                for s in sorted(wanted)
                for it in live
                for k in samples
            ]
            # Program-aided cells: the plans, written with the other first answers.
            for cell in (
                c for c in self.cells if c.model == model and c.strategy.name == "program"
            ):
                pattern = plan_pattern(cell.strategy, self.limits)
                jobs += [
                    (
                        (model, cell.strategy.label, id(it), k),
                        self._call(
                            cell.strategy.prompt,
                            model,
                            it,
                            plans[model, id(it)],
                            k,
                            pattern=pattern,
                        ),
                    )
                    for it in live
                    if it.data.question_type != OPEN
                    for k in samples
                ]
            first.update(self._generate(model, jobs))
        # Phase B: post-hoc edits of those answers (or of the --from file's).
        edits: dict[tuple, tuple[str | None, Outcome | None]] = {}
        for model in self.config.models:
            jobs = []
            for cell in (
                c for c in self.cells if c.model == model and c.strategy.name == "posthoc"
            ):
                for it in live:
                    for k in samples:
                        key = (model, cell.strategy.label, id(it), k)
                        original = self._source_text(cell, it, k, first)
                        edits[key] = (original, None)
                        if original is not None:
                            jobs.append(
                                (
                                    key,
                                    self._call(
                                        "posthoc_attribution",
                                        model,
                                        it,
                                        plans[model, id(it)],
                                        k,
                                        response=remove_thinking(original),
                                    ),
                                )
                            )
            for key, out in self._generate(model, jobs).items():
                edits[key] = (edits[key][0], out)
        # Phase C: the plans run, their tool calls batched round by round across items.
        programs: dict[tuple, ProgramResult] = {}
        for model in self.config.models:
            program_jobs = [
                ProgramJob(
                    key,
                    cell.strategy,
                    first[key],
                    it.video,
                    plans[model, id(it)],
                    it.data.question,
                    list(it.data.options or []),
                    self._sampling(model, k),
                )
                for cell in self.cells
                if cell.model == model and cell.strategy.name == "program"
                for it in live
                if it.data.question_type != OPEN
                for k in samples
                if first[key := (model, cell.strategy.label, id(it), k)].ok
            ]
            if program_jobs:
                programs.update(
                    execute(
                        program_jobs, self.toolers[model], self.cutter, self.prompts, self.limits
                    )
                )
        row = partial(
            response_row,
            samples=self.config.samples,
            benchmark=self.benchmark,
            from_file=self.from_file,
        )
        rows: dict[Cell, list[dict]] = {
            cell: [row(cell, it, k, first, edits, plans, programs) for it in items for k in samples]
            for cell in self.cells
        }
        grade_answers(rows, self.config, self.prompts, self.answerers)
        return rows

    def _plan(self, model: str, it: Item) -> ResponderPlan:
        preset = self.engines[model].preset
        images = it.data.images
        reserve = len(images) if "image" in preset.modalities else 0
        return attach(
            plan_media(self.cutter, it.video, preset, reserve_images=reserve), images, preset
        )

    def _source_text(self, cell: Cell, it: Item, k: int, first: dict) -> str | None:
        if cell.strategy.source == "from":
            rid = it.item.id
            return self._sources.get(rid) if rid is not None else None
        out = first.get((cell.model, cell.strategy.source, id(it), k))
        return out.raw if out is not None and out.ok else None

    # ------------------------------------------------------------------ answers

    # ------------------------------------------------------------------ run

    def run(
        self, dataset: pathlib.Path | Dataset, *, reference_format: bool = False
    ) -> GenerateResult:
        t0 = time.perf_counter()
        if not isinstance(dataset, Dataset):
            dataset = open_dataset(dataset, self.config.dataset_format)
        self.benchmark = dataset.name
        self.subset = None
        if self.config.sample is not None:
            self.subset = choose(
                dataset.items(self.config.limit, self.config.inputs.limits()),
                self.config.sample,
                self.config.sample_seed,
                self.config.stratify,
            )
        partial = {c: p.with_name(p.name + layout.PARTIAL_SUFFIX) for c, p in self.paths.items()}
        for stale in [*self.paths.values(), self.summary_path]:
            stale.unlink(missing_ok=True)
        for p in partial.values():
            p.parent.mkdir(parents=True, exist_ok=True)
        handles = {c: p.open("w", encoding="utf-8") for c, p in partial.items()}
        kept: dict[Cell, list[GenerationRecord]] = {c: [] for c in self.cells}
        try:
            items = dataset.items(self.config.limit, self.config.inputs.limits())
            if self.subset is not None:
                items = (i for i in items if i.index in self.subset.indices)
            for chunk in chunks(items, self.config.chunk_size):
                for cell, cell_rows in self._chunk(chunk).items():
                    for row in cell_rows:
                        rec = _recorded(row)
                        text = dumps_record(rec.dump(), sort_keys=True, default=str)
                        handles[cell].write(text + "\n")
                        # what the summary grades: memory holds these fields of every row only
                        kept[cell].append(
                            GenerationRecord.model_construct(**{k: getattr(rec, k) for k in _KEPT})
                        )
            for h in handles.values():
                h.flush()
                os.fsync(h.fileno())
        finally:
            for h in handles.values():
                h.close()
        for c, p in partial.items():
            os.replace(p, self.paths[c])
            if reference_format:
                # this run wrote every line, so none is an error
                rows = [
                    r.dump()
                    for r in read_generation_records(self.paths[c])
                    if not isinstance(r, ReadError)
                ]
                self.paths[c].with_suffix(".reference.json").write_text(
                    dumps_record(rows, indent=1, default=str), encoding="utf-8"
                )
        return self._summarize(dataset, kept, t0)

    def _summarize(
        self, dataset: Dataset, kept: dict[Cell, list[GenerationRecord]], t0: float
    ) -> GenerateResult:
        self.summary_path.parent.mkdir(parents=True, exist_ok=True)
        written = GenerationSummary.model_validate(summarize(self, dataset, kept, t0))
        summary = as_model(GenerationSummary, write_json(self.summary_path, written))
        outputs = {c.label: p for c, p in self.paths.items()}
        return GenerateResult(summary, self.summary_path, outputs, summary.errors_list or [])

    def close(self, *, engines: bool = True) -> None:
        if engines:
            close_all(self.engines.values())
        self.cutter.close()
        self.cache.close()
