"""Serving judges with vLLM's own server: `murgat serve` and the processes it starts.

`launcher` turns a preset into the `vllm serve` command line (the arguments the in-process engine
uses, plus what a judge needs); `entry` runs vLLM's CLI on the CPU wheel too; `process` starts,
waits for and stops server processes (for `murgat serve`, `--data-parallel`, tests and benchmarks);
`connector` is the media connector those servers run with (inline data only, no URL fetched);
`guard` the middleware that asks for the API key on every route but /health and /ping.
Nothing here serves requests itself: vLLM does.
"""

from .launcher import ServeRefused, is_loopback, serve_argv, serve_env
from .process import ServerProcess, free_port

__all__ = ["ServeRefused", "ServerProcess", "free_port", "is_loopback", "serve_argv", "serve_env"]
