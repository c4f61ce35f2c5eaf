#!/usr/bin/env bash
# Set up (idempotent), prove every judge engine on every local test model, then score the
# bundled sample with the tiny Qwen3-Omni judge on vLLM and print the table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
.venv/bin/murgat smoke --engine vllm
.venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --out out/sample --judge tiny-qwen3-omni "$@"
