#!/usr/bin/env bash
# Set up (idempotent), prove every judge engine on every local test model, then score the
# bundled sample on vLLM and print the table: SmolLM2-135M (a real, weak text model) finds the
# verifiable sentences and decomposes them, the random-weight Qwen3-Omni thinker judges the
# cut frames and audio. The numbers prove the plumbing, not judge quality.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
.venv/bin/murgat smoke --engine vllm
.venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --out out/sample --judge tiny-qwen3-omni \
  --verifier smollm2-135m-instruct --decomposer smollm2-135m-instruct "$@"
