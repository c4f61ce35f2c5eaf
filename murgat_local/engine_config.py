"""Where each stage's engine runs and how it is reached: `[server]`, `[stage_engines.STAGE]`,
`[ray]`, and the engine options they give. Part of the run configuration (`config`), which
re-exports these; none of it changes a verdict except as `ServerConfig.tokenizer` says.
"""

from __future__ import annotations

import pathlib

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ServerConfig(BaseModel):
    """Where the `openai` engine finds its server (`vllm serve`, e.g. started by `murgat serve`)
    and how it talks to it. None of it changes a verdict, so none of it is in a cache key; but
    where the weights are not readable here, leaving `tokenizer` out does (see `tokenizer`)."""

    model_config = ConfigDict(extra="forbid")
    base_url: str | None = None  # http://HOST:PORT/v1
    api_key_env: str | None = None  # the environment variable holding the server's API key
    max_concurrency: int = Field(32, ge=1)  # requests in flight at once
    timeout_s: float = Field(600.0, gt=0)  # per request; then retried `retries` times
    retries: int = Field(2, ge=0)
    retry_for_s: float = Field(300.0, ge=0)  # how long an unreachable server is waited for
    # The weights' fingerprint when their folder is not readable here (`murgat serve` prints it).
    fingerprint: str | None = None
    served_model: str | None = None  # default: the preset's name
    # Where the weights are not readable here: a folder with the served model's tokenizer files,
    # whose special tokens are broken in untrusted text (checked against the server at start).
    # Without it only generic shapes are, and the judge's identity says so (its own cache keys).
    tokenizer: pathlib.Path | None = None

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer(cls, v: pathlib.Path | None) -> pathlib.Path | None:
        if v is not None and not v.is_dir():
            raise ValueError(f"tokenizer {v} is not a folder")
        return v

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https:// (got {v!r})")
        return v


class StageEngine(ServerConfig):
    """`[stage_engines.STAGE]`: one stage on another engine (e.g. entailment on a server)."""

    engine: str

    @field_validator("engine")
    @classmethod
    def _engine(cls, v: str) -> str:
        from .engines import check_engine

        check_engine(v)
        return v


class RayConfig(BaseModel):
    """`[ray]`: the cluster the `ray` engine runs on (none: a local Ray started for the run)."""

    model_config = ConfigDict(extra="forbid")
    address: str | None = None  # e.g. "ray://head:10001"; "auto": this machine's cluster
    replicas: int = Field(1, ge=1)  # vLLM replicas (one per GPU, or per bundle below)
    replica_resources: dict[str, float] | None = None  # one replica's bundle; CPU build: {"CPU": 1}
    rows_per_batch: int = Field(16, ge=1)
    local_cpus: int = Field(4, ge=1)  # a local Ray's logical CPUs


def _engine_options(
    kind: str, server: ServerConfig, data_parallel: int, ray: RayConfig | None = None
) -> tuple[str, dict]:
    """The registered engine and its options for one stage."""
    if kind == "ray":
        return kind, {k: v for k, v in (ray or RayConfig()).model_dump().items() if v is not None}
    if kind == "openai":
        if not server.base_url:
            raise ValueError(
                "engine 'openai' needs a server: --base-url URL, or base_url in [server] "
                "or in the stage's [stage_engines.STAGE]"
            )
        return kind, {k: v for k, v in server.model_dump().items() if v is not None}
    if data_parallel > 1:
        if kind != "vllm":
            raise ValueError(
                f"--data-parallel runs vLLM replicas; it does not apply to engine {kind!r}"
            )
        return "replicas", {"data_parallel": data_parallel}
    return kind, {}
