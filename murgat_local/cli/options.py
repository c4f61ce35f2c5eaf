"""Every option more than one command takes, and every option that overrides a configuration key,
declared once: its flag, the key it sets, its help and the commands that take it. The type, the
bounds, the choices and the default come from the configuration's own field (`config.RunConfig`,
`generate_config.GenerateConfig`), so a flag cannot drift from the key it overrides; `takes`
builds each command's options from these declarations (`cli/options_build.py`).

A declaration may differ per command (`Variant`): `--out` is a folder for `score` and a records
file for `rescore`; a command shows only its own help.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any

# The configurations a key may belong to, by the name a declaration uses.
SCORE, GENERATE, META = "score", "generate", "meta"


@dataclass(frozen=True)
class Variant:
    """How one command takes an option, where it differs from the declaration."""

    help: str | None = None
    required: bool | None = None
    # the configurations the value goes to in that command (None: every one holding the key)
    to: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Option:
    """One option. `keys`: the configuration keys it sets, dotted (`server.base_url`); none for an
    option the command reads itself (`--out`). `kind`: the value's type where no key gives it.
    `switch`: a flag with no value that sets its key to this value (a list-typed key: repeatable)."""

    flag: str
    help: str
    commands: dict[str, Variant | None]
    keys: tuple[str, ...] = ()
    kind: type = str
    switch: Any = None
    envvar: str | None = None
    required: bool = False
    default: Any = None
    to: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        """The command function's parameter for an option with no key."""
        return self.flag.lstrip("-").replace("-", "_")

    def variant(self, command: str) -> Variant:
        return self.commands.get(command) or Variant()


AS_DECLARED: Variant | None = None  # a command that takes the option as declared
JUDGING = {"score": AS_DECLARED, "run": AS_DECLARED}
ENGINE_USERS = {"score": AS_DECLARED, "generate": AS_DECLARED, "run": AS_DECLARED}
SUBSET = {"generate": AS_DECLARED, "run": AS_DECLARED}

OPTIONS: tuple[Option, ...] = (
    # What the command reads and writes.
    Option(
        "--config",
        "TOML run configuration: scoring settings at the top level, generation in its generate table",
        {
            "score": AS_DECLARED,
            "generate": AS_DECLARED,
            "run": AS_DECLARED,
            "segment": AS_DECLARED,
            "cut": AS_DECLARED,
            "program run": AS_DECLARED,
        },
        kind=pathlib.Path,
    ),
    Option(
        "--media-root",
        "folder holding the videos",
        {
            "score": AS_DECLARED,
            "program run": AS_DECLARED,
            "generate": Variant(
                "folder holding the videos (default: the benchmark's own folder)", required=False
            ),
            "run": Variant(
                "folder holding the videos (default: the benchmark's own folder)", required=False
            ),
        },
        kind=pathlib.Path,
        required=True,
    ),
    Option(
        "--out",
        "folder to write into",
        {
            "score": AS_DECLARED,
            "run": AS_DECLARED,
            "generate": Variant("a .jsonl file for one model and strategy, or a folder for a grid"),
            "rescore": Variant("write the rescored records here, as JSONL", required=False),
        },
        kind=pathlib.Path,
        required=True,
    ),
    Option(
        "--limit",
        "only the first N responses",
        {
            "score": AS_DECLARED,
            "segment": AS_DECLARED,
            "generate": Variant("only the first N questions"),
            "run": Variant("only the first N questions", to=(GENERATE,)),
        },
        keys=("limit",),
    ),
    Option(
        "--cache",
        "the cache of model calls, kept across runs (default: in the output folder)",
        {"score": AS_DECLARED, "generate": AS_DECLARED},
        keys=("cache",),
    ),
    Option(
        "--models-dir",
        "where presets' relative model paths live",
        {**ENGINE_USERS, "program run": AS_DECLARED},
        keys=("models_dir",),
        envvar="MURGAT_MODELS_DIR",
    ),
    Option(
        "--allow-outside",
        "a folder outside --media-root that videos may be in (repeatable)",
        {**ENGINE_USERS, "program run": AS_DECLARED},
        keys=("allow_outside",),
    ),
    Option(
        "--verbose",
        "show engine logs here instead of OUT/engine.log (named on stderr)",
        {**ENGINE_USERS, "program run": AS_DECLARED},
        kind=bool,
        default=False,
    ),
    # The engine.
    Option(
        "--engine",
        "vllm, openai (a server: --base-url), transformers, ray, or another registered engine",
        {**ENGINE_USERS, "program run": AS_DECLARED},
        keys=("engine",),
    ),
    Option(
        "--base-url",
        "engine openai: the server, http://HOST:PORT/v1",
        ENGINE_USERS,
        keys=("server.base_url",),
    ),
    Option(
        "--api-key-env",
        "engine openai: the variable holding the server's key",
        ENGINE_USERS,
        keys=("server.api_key_env",),
    ),
    Option(
        "--max-concurrency",
        "engine openai: requests in flight",
        ENGINE_USERS,
        keys=("server.max_concurrency",),
    ),
    Option(
        "--fingerprint",
        "engine openai: the served weights' fingerprint, when they are not readable here",
        ENGINE_USERS,
        keys=("server.fingerprint",),
    ),
    Option(
        "--tokenizer",
        "engine openai, weights not readable here: a folder with the served model's tokenizer "
        "files (its special tokens are broken in evaluated text)",
        ENGINE_USERS,
        keys=("server.tokenizer",),
    ),
    Option(
        "--data-parallel",
        "N vLLM replicas, one per GPU, share each batch",
        ENGINE_USERS,
        keys=("data_parallel",),
    ),
    # The judges.
    Option("--judge", "model for every scoring stage (preset or directory)", JUDGING, ("judge",)),
    Option("--verifier", "model for verifiable-claim identification", JUDGING, ("verifier",)),
    Option(
        "--decomposer", "model for decontextualization and decomposition", JUDGING, ("decomposer",)
    ),
    Option("--entailer", "model for attribution", JUDGING, ("entailer",)),
    Option(
        "--entailer-visual",
        "model for facts whose citations are all visual (default: the entailer)",
        JUDGING,
        ("entailer_visual",),
    ),
    Option(
        "--entailer-audio",
        "model for facts whose citations are all audio (default: the entailer)",
        JUDGING,
        ("entailer_audio",),
    ),
    # What is judged of each response.
    Option(
        "--compat",
        "'reference' reproduces the public reference's reading and scoring",
        {
            "score": AS_DECLARED,
            "run": AS_DECLARED,
            "segment": AS_DECLARED,
            "rescore": AS_DECLARED,
            "cut": AS_DECLARED,
        },
        keys=("compat",),
    ),
    Option(
        "--no-decontextualize",
        "judge each sentence as written, without decontextualization",
        {"score": AS_DECLARED, "segment": AS_DECLARED},
        keys=("decontextualize",),
        switch=False,
    ),
    Option(
        "--parse-reasoning",
        "with --compat reference: the reference's --parse_reasoning",
        {"score": AS_DECLARED, "run": AS_DECLARED, "segment": AS_DECLARED},
        keys=("parse_reasoning",),
        switch=True,
    ),
    Option(
        "--group-by",
        "also summarize per value of this field: a key of the responses' `categories`, or "
        "model, benchmark, question_type (repeatable)",
        {"score": AS_DECLARED, "run": AS_DECLARED, "rescore": AS_DECLARED},
        keys=("group_by",),
    ),
    Option(
        "--max-failed-calls",
        "fail the run (exit 1) when a larger share of judge calls got no verdict",
        {"score": AS_DECLARED},
        keys=("max_failed_calls",),
    ),
    Option(
        "--escalate-to",
        "with a config holding certified thresholds (its escalation table, from meta-eval --certify "
        "--select): a verdict under its judge's threshold goes to this judge (a model, a panel, "
        "or human:LABELS; repeat for a cascade); what none keeps is abstained",
        {"score": AS_DECLARED},
        keys=("escalate_to",),
    ),
    # The responders.
    Option("--model", "responder model (repeat for a grid)", SUBSET, ("models",), required=True),
    Option(
        "--strategy",
        "base, cite, posthoc[:cite], program:{logic,narrative}-{declarative,imperative} "
        "(repeat for a grid)",
        SUBSET,
        ("strategies",),
    ),
    Option("--samples", "samples per question (seeds seed..seed+K-1)", SUBSET, ("samples",)),
    Option(
        "--seed",
        "sampling seed, and the draw of --sample",
        SUBSET,
        ("sample_seed", "sampling.seed"),
        to=(GENERATE,),
    ),
    Option(
        "--sample",
        "answer N questions drawn by --seed (recorded in provenance)",
        SUBSET,
        ("sample",),
    ),
    Option(
        "--stratify",
        "with --sample: draw in proportion to this category's values",
        SUBSET,
        ("stratify",),
    ),
    Option(
        "--dataset-format",
        "the dataset's format when detection cannot tell (see murgat dataset)",
        SUBSET,
        ("dataset_format",),
    ),
    Option(
        "--answer-judge",
        "maps free answers to options (default: the responder)",
        {"generate": AS_DECLARED},
        ("answer_judge",),
    ),
    Option(
        "--temperature",
        "responders' sampling temperature",
        {"generate": AS_DECLARED},
        ("sampling.temperature",),
        to=(GENERATE,),
    ),
    Option(
        "--top-p",
        "responders' nucleus sampling",
        {"generate": AS_DECLARED},
        ("sampling.top_p",),
        to=(GENERATE,),
    ),
    Option(
        "--top-k",
        "responders' top-k sampling (0: off)",
        {"generate": AS_DECLARED},
        ("sampling.top_k",),
        to=(GENERATE,),
    ),
    Option(
        "--max-tokens",
        "most tokens a response may have",
        {"generate": AS_DECLARED},
        ("sampling.max_tokens",),
        to=(GENERATE,),
    ),
    Option(
        "--thinking-budget",
        "extra tokens a thinking model may spend before its answer",
        {"generate": AS_DECLARED},
        ("sampling.thinking_budget",),
        to=(GENERATE,),
    ),
    # Judges against people (`meta_config.MetaEvalOptions`).
    Option(
        "--resamples",
        "bootstrap resamples of the 95% intervals (0: none)",
        {"rescore": AS_DECLARED},
        ("bootstrap_resamples",),
    ),
    Option(
        "--resamples",
        "bootstrap resamples of the intervals",
        {"meta-eval": AS_DECLARED},
        ("resamples",),
    ),
    Option("--seed", "the seed of the bootstrap", {"meta-eval": AS_DECLARED}, ("seed",)),
    Option(
        "--certify",
        "certify per yes/no stage the lowest confidence threshold at which the judge agrees "
        "with people at least this often (e.g. 0.9), with probability >= 1 - --alpha",
        {"meta-eval": AS_DECLARED},
        ("certify",),
    ),
    Option(
        "--alpha",
        "--certify's risk: the guarantee holds with probability 1 - alpha",
        {"meta-eval": AS_DECLARED},
        ("alpha",),
    ),
    Option(
        "--min-kept",
        "--certify tests thresholds from the strictest that keeps at least this many verdicts",
        {"meta-eval": AS_DECLARED},
        ("min_kept",),
    ),
    Option(
        "--split-seed",
        "with --certify and several runs: the seed of the random split of the labelled "
        "responses into a part that chooses the judge and a part that certifies it",
        {"meta-eval": AS_DECLARED},
        ("split_seed",),
    ),
    Option(
        "--select-fraction",
        "the share of the labelled responses that chooses; the others certify",
        {"meta-eval": AS_DECLARED},
        ("select_fraction",),
    ),
)


def flag_of_key() -> dict[str, str]:
    """The flag that sets each configuration key (how a refused key is reported)."""
    return {key: o.flag for o in OPTIONS for key in o.keys}


def for_command(command: str) -> list[Option]:
    """The options `command` takes, in declaration order."""
    return [o for o in OPTIONS if command in o.commands]
