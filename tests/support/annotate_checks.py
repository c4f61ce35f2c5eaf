"""A scripted annotator for the `murgat annotate` tests: a fixed answer for each question, read
from what the question shows (as a person reads the page), so that every test that labels the
sample gets the same labels whichever way it answers (Python, HTTP, the keyboard)."""

from __future__ import annotations

import re

NOT_VERIFIABLE = re.compile(r"(therefore|so |hence|the answer|there are)", re.I)


def scripted(question: dict) -> object:
    """The answer to a question as `/api/next` gives it."""
    kind = question["kind"]
    sentence = question["response"]["sentences"][question["sentence"]]
    if kind == "verifiable":
        return not NOT_VERIFIABLE.match(sentence)
    if kind == "facts":
        return question["proposal"]
    if kind == "entailed":
        return "yellow" not in question["fact_text"].lower()
    return question["citation"] == 0  # precise: the first citation is needed, the others not


def key_for(answer: object) -> str:
    """The key a person presses for `answer` on the page (facts: Enter accepts the proposal)."""
    return (
        {True: "y", False: "n", "unsure": "u"}.get(answer, "Enter")
        if not isinstance(answer, list)
        else "Enter"
    )


class Server:
    """`murgat annotate ...` as a real process; its URL read from the line it prints."""

    def __init__(self, args: list[str], env: dict | None = None, timeout: float = 120):
        import os
        import subprocess
        import sys
        import threading
        import time

        from support.paths import ROOT

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "murgat_local.cli", "annotate", *map(str, args)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: list[str] = []
        self.url = None
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.lines.append(line)
                m = re.search(r"murgat annotate: (http://\S+/)", line)
                if m:
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.2):
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError("murgat annotate did not start: " + "".join(self.lines))
        if self.url is None:
            self.proc.wait(30)
            raise RuntimeError(
                f"murgat annotate exited {self.proc.returncode}: " + "".join(self.lines)
            )

    def call(self, path: str, body=None, headers: dict | None = None, raw: bytes | None = None):
        """(status, parsed JSON or text) of one request."""
        import json
        import urllib.error
        import urllib.request

        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        hdrs.update(headers or {})
        req = urllib.request.Request(
            self.url + path.lstrip("/"),
            data=data,
            headers=hdrs,
            method="POST" if data is not None else "GET",
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def kill(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self._reader.join(10)

    def stop(self) -> int:
        import signal

        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        self._reader.join(10)
        return code

    @property
    def output(self) -> str:
        return "".join(self.lines)
