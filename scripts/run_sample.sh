#!/usr/bin/env bash
# Set up (idempotent), prove every judge engine on every local test model, then score the
# bundled sample on vLLM and print the table: SmolLM2-135M (a real, weak text model) finds the
# verifiable sentences and decomposes them, the random-weight Qwen3-Omni thinker judges the
# cut frames and audio. The numbers prove the plumbing, not judge quality.
# The engines' own output goes to log files, each named as its command starts; after set-up
# the whole run prints under 60 lines. Arguments go to `murgat score` (--verbose shows the logs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
echo "[sample] murgat smoke: each local test model on vLLM, per modality (minutes)"
.venv/bin/murgat smoke --engine vllm
echo "[sample] murgat score: the bundled sample (about five minutes)"
.venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --out out/sample --judge tiny-qwen3-omni \
  --verifier smollm2-135m-instruct --decomposer smollm2-135m-instruct "$@"
