"""OpenAI-compatible server engine: judges served by `vllm serve`, here or on the LAN.

A batch is sent as concurrent `/v1/chat/completions` requests (at most `max_concurrency` in
flight), each with its output constraint in vLLM's `structured_outputs` field and its media
inline (see `wire`), after the same checks and fitting as in-process (`limits.prepare`) when the
model's folder is readable here. Connection errors, 5xx and 429 answers are retried with exponential
backoff for up to `retry_for_s` seconds (a restarting server is waited for); a request with no
answer within `timeout_s` is retried `retries` times, then reported as timed out; a 4xx answer
is that request's refusal. A server that stays unreachable past the retry budget raises
`EngineUnavailable`: the run stops with that message and the cache keeps every verdict so far.

Identity: the server runs vLLM on the preset's weights and arguments (`murgat serve` launches it
so), so the identity is the in-process engine's: the weights' digest when their folder is
readable here, else the `fingerprint` the user states (`murgat serve` prints it). The server's
model list is checked at start: the served model must be there, with the preset's context length.

Neutralization (`render.neutralization_of`): the model's special tokens come from its folder when
readable here, else from `tokenizer` (a folder with the served model's tokenizer files), which is
checked at start against the server's own `/tokenize`; with neither, only the generic shapes are
broken, and that is part of the identity (`identity.identity_material`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import random
import time
from collections.abc import Sequence

from .base import (
    TIMED_OUT,
    EngineStats,
    EngineUnavailable,
    Request,
    Result,
    finish,
    record,
    with_p_yes,
)
from .confidence import wants_p_yes
from .expect import PartTokens
from .identity import effective_args, engine_identity
from .limits import RequestFitter, prepare
from .logprobs import LabelTokens, from_openai, top_logprobs_for
from .openai_start import ServerChecks, _local_renderer, _placeholders
from .presets import Preset
from .reach import cited_fields, count, prompt_print
from .render import neutralization_of, tokenizer_special_tokens
from .thought import CLOSE
from .thought_served import close_cut_thoughts
from .wire import body


class _Unreachable:
    """No answer from the server within the retry budget (internal marker, never returned)."""

    def __init__(self, reason: str):
        self.reason = reason


class OpenAIEngine(ServerChecks):
    """Judges on an OpenAI-compatible server (vLLM's). `base_url` ends in `/v1`."""

    def __init__(
        self,
        preset: Preset,
        *,
        base_url: str,
        temperature: float = 0.0,
        api_key_env: str | None = None,
        max_concurrency: int = 32,
        timeout_s: float = 600.0,
        retry_for_s: float = 300.0,
        retries: int = 2,
        fingerprint: str | None = None,
        served_model: str | None = None,
        tokenizer: str | os.PathLike | None = None,
        label_tokens: bool = False,
        **engine_args,
    ):
        import httpx  # noqa: F401  (checked here: a clear error before any request)

        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.preset = preset
        self.name = preset.name
        self.modalities = preset.modalities
        self.stats = EngineStats()
        self.temperature = temperature
        self.base_url = base_url.rstrip("/")
        self.max_concurrency = int(max_concurrency)
        self.timeout_s = float(timeout_s)
        self.retry_for_s = float(retry_for_s)
        self.retries = int(retries)
        self._fingerprint = fingerprint
        # Whether a yes/no request asks the label tokens (`logprob_token_ids`) in place of the
        # top alternatives. Only on servers this process started (the replicas): vLLM 0.32 hands
        # the gathered columns to every request of a batch once one asks for token ids, so on
        # a server others share, their top-k log-probabilities would come back wrong.
        self._label_tokens = bool(label_tokens)
        self._args = effective_args("openai", preset, engine_args)
        self.headers = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(
                    f"--api-key-env {api_key_env}: that environment variable is not set"
                )
            self.headers["Authorization"] = f"Bearer {key}"
        self.neutralization = neutralization_of(preset, tokenizer)
        renderer = _local_renderer(preset)
        self.fitter = RequestFitter(preset, self._args, renderer) if renderer is not None else None
        if renderer is not None:
            self.special_tokens = renderer.special_tokens
        elif tokenizer is not None:
            self.special_tokens = tokenizer_special_tokens(
                tokenizer, trust_remote_code=preset.trust_remote_code
            )
        else:
            self.special_tokens = []
        self.placeholders = _placeholders(preset, renderer, tokenizer)
        # Each cited part's expected tokens need the model's processor: only with its folder here.
        self.part_tokens = PartTokens(preset, renderer, self.placeholders)
        self._tokenizer = renderer.tokenizer if renderer is not None else None
        self._tokenizer_folder = tokenizer
        # The BOS counted in the server's prompt ids (`Result.bos_count`): known from the folder.
        self._bos_id = renderer.tokenizer.bos_token_id if renderer is not None else None
        self.server_model = self._check_server(served_model or preset.name)
        if renderer is None and tokenizer is not None:
            self._check_tokenizer(tokenizer)

    @property
    def identity(self) -> str:
        return engine_identity(
            "openai",
            self.preset,
            self.temperature,
            self._args,
            fingerprint=self._fingerprint,
            neutralization=self.neutralization["neutralization"],
        )

    @functools.cached_property
    def _labels(self) -> LabelTokens | None:
        """The served model's vocabulary (`logprobs.LabelTokens`): from its folder where
        readable here, else from the tokenizer folder given; None with neither."""
        if self._tokenizer is not None:
            return LabelTokens(self._tokenizer)
        if self._tokenizer_folder is None:
            return None
        from transformers import AutoTokenizer

        return LabelTokens(
            AutoTokenizer.from_pretrained(
                self._tokenizer_folder, trust_remote_code=self.preset.trust_remote_code
            )
        )

    @functools.cached_property
    def label_ids(self) -> tuple[int, ...] | None:
        """The tokens that can decide a yes/no verdict (`LabelTokens.ids`), asked for by id on
        a server this process started (`label_tokens`) whose model folder is readable here;
        None (the top alternatives are asked for) otherwise."""
        if not self._label_tokens or self._tokenizer is None or self._labels is None:
            return None
        return self._labels.ids

    def top_logprobs(self, request: Request) -> int:
        """How many top alternatives a yes/no request asks for: counted from its grammar and
        the vocabulary (`LabelTokens.top_logprobs`), else the most a vLLM server returns."""
        return top_logprobs_for(self._labels, request.constraint())

    # ------------------------------------------------------------------ judging

    def judge(self, requests: Sequence[Request]) -> list[Result]:
        results: list[Result | None] = [None] * len(requests)
        bodies, index = [], []
        quirks = self.preset.quirks
        notes: dict[int, str | None] = {}
        expected: dict[int, list[tuple[str, int]] | str] = {}
        for i, req in enumerate(requests):
            ready = prepare(req, self.preset, self.fitter)
            if isinstance(ready, Result):
                results[i] = ready
                continue
            req, notes[i], blocks = ready
            try:
                wire = body(
                    req,
                    quirks,
                    self.server_model["id"],
                    self.temperature,
                    self.special_tokens,
                    quirks.extra_output_tokens,
                    self.label_ids if wants_p_yes(req.verdict) else None,
                    self.top_logprobs(req) if wants_p_yes(req.verdict) else 0,
                )
                # The server's own prompt ids, its placeholders expanded: what reached the model.
                wire["return_token_ids"] = True
                bodies.append(wire)
            except Exception as e:  # a bad media item fails its own request only
                results[i] = Result(error=f"could not build the request ({type(e).__name__}: {e})")
                continue
            if req.media:
                expected[i] = self._expected(req, blocks)
            index.append(i)
        t0 = time.perf_counter()
        answers = asyncio.run(self._send_all(bodies)) if bodies else []
        # A thinking judge's thought cut at its budget: closed, its verdict asked for again.
        answers = close_cut_thoughts(self, [requests[i] for i in index], bodies, answers)
        self.stats.wall_s += time.perf_counter() - t0
        gone = [a for a in answers if isinstance(a, _Unreachable)]
        if gone:
            raise EngineUnavailable(
                f"server {self.base_url} stayed unreachable for {self.retry_for_s:g} s "
                f"({gone[0].reason}); the verdicts so far are cached, rerun to resume"
            )
        for i, sent, answer in zip(index, bodies, answers):
            res = (
                answer
                if isinstance(answer, Result)
                else self._result(requests[i], answer, expected.get(i), sent.get("top_logprobs"))
            )
            results[i] = dataclasses.replace(res, note=notes.get(i))
        final = [r for r in results if r is not None]
        assert len(final) == len(requests)
        record(self.stats, final)
        return final

    def _expected(self, sent: Request, blocks: tuple[int, ...]) -> list[tuple[str, int]] | str:
        """Each cited part's expected tokens (`expect.PartTokens`), or why they are not known."""
        if self.part_tokens.renderer is None:
            return (
                "the model's processor is not readable here (its folder is on the server's "
                "machine), so only a cited modality of zero tokens is caught"
            )
        return self.part_tokens.expected(sent, blocks)

    def _result(
        self,
        request: Request,
        data: dict,
        expected: list[tuple[str, int]] | str | None = None,
        top: int | None = None,
    ) -> Result:
        """One answer as a Result; `top`: the k of the top alternatives its body asked for."""
        try:
            message = data["choices"][0]["message"]
            text = message.get("content") or ""
            thinking = message.get("reasoning_content") or message.get("reasoning")
            if thinking:  # the server split a thinking model's reasoning off: put it back, as raw
                text = f"<think>{thinking}</think>{text}"
            usage = data.get("usage") or {}
            res = finish(
                request,
                text,
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
        except (KeyError, IndexError, TypeError, ValueError) as e:
            return Result(error=f"the server's answer has no completion ({type(e).__name__}: {e})")
        res = with_p_yes(request, res, from_openai(data["choices"][0], top))
        if data.get("thought_cut"):  # closed at its budget (`engines.thought_served`)
            res = dataclasses.replace(res, thought_cut=True)
        ids = data.get("prompt_token_ids")
        res = dataclasses.replace(res, **prompt_print(ids, self._bos_id))
        if not request.media and (ids is None or self.placeholders is None):
            return res  # nothing cited: nothing to miss
        if self.placeholders is None:
            return dataclasses.replace(
                res,
                reached_unknown="the model's placeholder tokens are not known here "
                "(its folder is not readable; --tokenizer names one)",
            )
        if ids is None:
            return dataclasses.replace(
                res,
                reached_unknown="the server returned no prompt token ids "
                "(vLLM before return_token_ids?)",
            )
        return dataclasses.replace(
            res,
            reached=count(ids, self.placeholders),
            **cited_fields(request, expected, ids, self.placeholders),
        )

    def send_all(self, bodies: list[dict], paths: list[str]) -> list:
        """Each body to its path under the base URL, concurrently: answers as `_send`'s."""
        return asyncio.run(self._send_all(bodies, paths))

    def close_ids(self) -> list[int]:
        """The token ids of the tag that closes a thought (`thought.CLOSE`): from the model's
        tokenizer here, else from the server's `/tokenize`."""
        if self._tokenizer is not None:
            return self._tokenizer.encode(CLOSE, add_special_tokens=False)
        import httpx

        r = httpx.post(
            f"{self.base_url.removesuffix('/v1')}/tokenize",
            headers=self.headers,
            timeout=60,
            json={"model": self.server_model["id"], "prompt": CLOSE, "add_special_tokens": False},
        )
        r.raise_for_status()
        return list(r.json()["tokens"])

    async def _send_all(self, bodies: list[dict], paths: list[str] | None = None) -> list:
        import httpx

        limits = httpx.Limits(
            max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency
        )
        gate = asyncio.Semaphore(self.max_concurrency)
        async with httpx.AsyncClient(
            base_url=self.base_url,
            headers=self.headers,
            limits=limits,
            timeout=httpx.Timeout(self.timeout_s, connect=10.0),
        ) as client:

            async def one(b: dict, path: str):
                async with gate:
                    return await self._send(client, b, path)

            paths = paths or ["/chat/completions"] * len(bodies)
            return await asyncio.gather(*(one(b, p) for b, p in zip(bodies, paths)))

    async def _send(self, client, payload: dict, path: str = "/chat/completions"):
        """One request to its end: the answer's JSON, a Result carrying its error, or _Unreachable."""
        import httpx

        deadline = time.monotonic() + self.retry_for_s
        delay, timeouts = 0.25, 0
        while True:
            try:
                r = await client.post(path, json=payload)
            except httpx.TimeoutException as e:
                if isinstance(e, httpx.ConnectTimeout):
                    problem = f"{type(e).__name__}: {e}"
                else:
                    timeouts += 1
                    if timeouts > self.retries:
                        return Result(
                            error=f"{TIMED_OUT}: no answer within {self.timeout_s:g} s "
                            f"({timeouts} attempts)"
                        )
                    continue
            except httpx.TransportError as e:
                problem = f"{type(e).__name__}: {e}"
            else:
                if r.status_code < 400:
                    try:
                        return r.json()
                    except ValueError:
                        return Result(error=f"the server's answer is not JSON: {r.text[:200]!r}")
                if r.status_code < 500 and r.status_code != 429:
                    return Result(
                        error=f"refused by the server (HTTP {r.status_code}): {_message(r)}"
                    )
                problem = f"HTTP {r.status_code}: {_message(r)}"
            if time.monotonic() > deadline:
                return _Unreachable(problem)
            await asyncio.sleep(delay * (1 + random.random() / 4))
            delay = min(delay * 2, 5.0)

    def close(self) -> None:
        pass


def _message(response) -> str:
    try:
        data = response.json()
        err = data.get("error", data)
        msg = err.get("message") if isinstance(err, dict) else str(err)
    except Exception:
        msg = response.text
    return str(msg)[:500]
