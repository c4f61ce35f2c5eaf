"""Serving judges with vLLM's own server: `murgat serve` and the processes it starts.

`launcher` turns a preset into the `vllm serve` command line (the arguments the in-process engine
uses, plus what a judge needs); `entry` runs vLLM's CLI on the CPU wheel too; `process` starts,
waits for and stops server processes (for `murgat serve`, `--data-parallel`, tests and benchmarks).
Nothing here serves requests itself: vLLM does.
"""

from .launcher import serve_argv, serve_env
from .process import ServerProcess, free_port

__all__ = ["ServerProcess", "free_port", "serve_argv", "serve_env"]
