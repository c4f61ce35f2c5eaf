"""`murgat program run`: one plan, by hand, against one video, with the real tools, to debug
plans and prompts. Set up (`PlanRun(...)`: the video, the model, nothing started), then run."""

from __future__ import annotations

import pathlib
import re
import tempfile

from ..engines import Sampling, engine_holder, load_preset
from ..generate.media import plan_media
from ..generate.program_tools import TOOL_PROMPTS
from ..generate.strategies import Strategy
from ..generate_config import GenerateConfig
from ..judges import load_prompt
from ..judges.calls import Outcome
from ..media.segments import SegmentCutter
from ..media.source import MediaError
from .cache import VerdictCache
from .judging import StageJudge
from .programs import ProgramJob, execute

_FIND = re.compile(r"\bfind\s*\(")


class PlanRun:
    def __init__(
        self,
        config: GenerateConfig,
        source: str,
        style: str,
        variant: str | None,
        video: str,
        media_root: pathlib.Path,
        question: str = "",
        options: tuple[str, ...] = (),
        cache: pathlib.Path | None = None,
    ):
        """`source` in `style` (logic, narrative) and `variant` (declarative, imperative; None:
        imperative when the plan calls find) on `config.models[0]`; `cache` keeps the tools'
        answers (None: none kept). ValueError / ModelNotFound for a video, model or preset that
        cannot be found, before anything starts."""
        variant = variant or ("imperative" if _FIND.search(source) else "declarative")
        self.model = config.models[0]
        self.work = pathlib.Path(tempfile.mkdtemp(prefix="murgat-program-"))
        self.cutter = SegmentCutter(
            media_root,
            config.media.options(),
            **config.media.bounds(),
            allow_outside=tuple(config.allow_outside),
        )
        try:
            self.ref = self.cutter.source(video)
            preset = load_preset(self.model, models_root=config.models_dir)
        except MediaError as e:
            self.cutter.close()
            raise ValueError(str(e)) from None
        except BaseException:
            self.cutter.close()
            raise
        kind, transport = config.engine_for(None)
        s = config.sampling
        self.holder = engine_holder(kind, preset, config.engine_args, transport, seed=s.seed)
        self.store = VerdictCache(cache or self.work / "cache.sqlite")
        self.judge = StageJudge("program", self.holder, self.store, batch_size=config.batch_size)
        self.limits = config.limits()
        sampling = Sampling(
            max_tokens=s.max_tokens,
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k,
            seed=s.seed,
        )
        media = plan_media(self.cutter, self.ref, preset)
        strategy = Strategy("program", f"{style}-{variant}")
        self.job = ProgramJob(
            ("plan",),
            strategy,
            Outcome(raw=source),
            self.ref,
            media,
            question,
            list(options),
            sampling,
        )

    def run(self) -> dict:
        """The report: the trace's status, the error, the response and the program's record;
        the engine is shut down on return."""
        prompts = {n: load_prompt(n) for n in TOOL_PROMPTS}
        try:
            result = execute([self.job], self.judge, self.cutter, prompts, self.limits)[("plan",)]
        finally:
            self.holder.close()
            self.cutter.close()
            self.store.close()
        return {
            # the interpreter's record as it built it (not yet a file's): its trace's status
            "status": (result.record.get("trace") or {}).get("status"),
            "error": result.error,
            "response": result.response,
            "program": result.record,
            "model": self.model,
            "video": str(self.ref.path),
        }
