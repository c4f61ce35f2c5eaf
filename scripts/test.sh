#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite (tests/unit and tests/e2e); arguments go to
# pytest: `bash scripts/test.sh tests/unit` runs the unit tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
