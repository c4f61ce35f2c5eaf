"""The same prompt on every route: what each engine ran for `murgat smoke`'s probes, recorded by
the tests that already hold that engine (one ledger per session, `conftest.prompt_ledger`), and
compared in tests/test_serve_prompt_routes.py, which starts only the routes no earlier test held.
"""

from __future__ import annotations

from murgat_local.judges.smoke import probe_requests

# The routes a prompt must be the same on: in-process vLLM, `vllm serve` through the OpenAI
# engine, Ray Data LLM, transformers.
ROUTES = ("vllm", "openai", "ray", "transformers")


def record_route(ledger: dict, route: str, preset, eng) -> dict:
    """Judge the smoke probes of every modality `preset` takes on `eng` and keep, per modality,
    (prompt_digest, bos_count, prompt_tokens): a probe this engine does not run keeps None."""
    probes = probe_requests(preset.modalities)
    results = eng.judge([r for _, r in probes])
    seen = {
        modality: (res.prompt_digest, res.bos_count, res.prompt_tokens)
        for (modality, _), res in zip(probes, results)
    }
    ledger.setdefault(preset.name, {})[route] = seen
    return seen


def differences(routes: dict[str, dict]) -> list[str]:
    """Where the routes' prompts differ, one line per modality: every probe that ran on two
    routes must have run on the same token ids (a probe not run on one route is not compared)."""
    out = []
    modalities = sorted({m for seen in routes.values() for m in seen})
    for m in modalities:
        ran = {r: seen[m] for r, seen in routes.items() if seen.get(m) and seen[m][0] is not None}
        if len({digest for digest, _, _ in ran.values()}) > 1:
            shown = ", ".join(
                f"{r}: {n} tokens, {bos} BOS, {digest[:12]}" for r, (digest, bos, n) in ran.items()
            )
            out.append(f"{m}: {shown}")
    return out
