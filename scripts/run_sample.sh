#!/usr/bin/env bash
# Set up (idempotent), prove the sample's two judges on vLLM (per modality; `murgat smoke` alone
# proves every local test model), then score the bundled sample on vLLM and print the table: SmolLM2-135M (a real, weak text model) finds the
# verifiable sentences and decomposes them, the random-weight Qwen3-Omni thinker judges the
# cut frames and audio. The numbers prove the plumbing, not judge quality.
# The engines' own output goes to log files, each named as its command starts; after set-up
# the whole run prints under 60 lines. Arguments go to `murgat score` (--verbose shows the logs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
echo "[sample] murgat smoke: the sample's two judges on vLLM, per modality"
.venv/bin/murgat smoke --engine vllm --model tiny-qwen3-omni --model smollm2-135m-instruct
echo "[sample] murgat score: the bundled sample (about five minutes)"
.venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --out out/sample --judge tiny-qwen3-omni \
  --verifier smollm2-135m-instruct --decomposer smollm2-135m-instruct "$@"
