"""A `vllm serve` process: started, waited for until it answers, stopped with its children."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import time

from ..engines.presets import Preset
from .launcher import check_exposure, serve_command, serve_env


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerStartError(RuntimeError):
    pass


class ServerProcess:
    """`vllm serve` for a preset on host:port, its output in `log` (else this process's own
    output). Use as a context manager, or call start()/wait_ready()/stop()."""

    def __init__(
        self,
        preset: Preset,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        log: pathlib.Path | None = None,
        device: str | None = None,
        overrides: dict | None = None,
        extra: tuple[str, ...] = (),
        env: dict | None = None,
    ):
        self.preset = preset
        self.host = host
        self.port = port or free_port(host)
        self.log = pathlib.Path(log) if log else None
        self.command = serve_command(
            preset, host=host, port=self.port, overrides=overrides, extra=extra
        )
        self.env = serve_env(env, device=device, command=self.command)
        check_exposure(host, self.env)
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ServerProcess:
        out = open(self.log, "ab") if self.log else None  # None: this process's own output
        try:
            # Its own process group, so stopping it stops vLLM's engine-core children too.
            self.proc = subprocess.Popen(
                self.command,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            if out is not None:
                out.close()
        return self

    def wait_ready(self, timeout_s: float = 600.0) -> ServerProcess:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerStartError(
                    f"vllm serve exited with code {self.proc.returncode} before it was ready"
                    + (f"; see {self.log}" if self.log else "")
                )
            try:
                if (
                    httpx.get(f"http://{self.host}:{self.port}/health", timeout=2).status_code
                    == 200
                ):
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        raise ServerStartError(
            f"vllm serve did not answer on {self.base_url} within {timeout_s:g} s"
        )

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """Like a crash: SIGKILL to the whole group, no shutdown."""
        self.stop(signal.SIGKILL)

    def __enter__(self):
        return self.start().wait_ready()

    def __exit__(self, *exc):
        self.stop()
        return False
