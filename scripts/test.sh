#!/usr/bin/env bash
# Set up (idempotent), run the checks (style, types, import layers; configured in pyproject.toml),
# then the whole test suite, which ends with its ten slowest tests.
# Arguments go to pytest: `bash scripts/test.sh tests/unit` runs the unit tests only (the
# checks still run first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BIN=.venv/bin
CODE=(murgat_local scripts tests)

# check NAME COMMAND...: runs one check; on a failure, stops the run with its own message.
check() {
  local name=$1
  shift
  echo "[check] $name"
  if ! "$@"; then
    echo "[check] failed: $name ($*)" >&2
    exit 1
  fi
}
check "ruff check" "$BIN/ruff" check "${CODE[@]}"
check "ruff format" "$BIN/ruff" format --check "${CODE[@]}"
check "mypy" "$BIN/mypy" --cache-dir .local/mypy-cache
check "import layers" "$BIN/lint-imports" --no-logo --cache-dir .local/import-linter-cache
# Two workers (pytest-xdist; MURGAT_TEST_WORKERS, 0 for one process): most of the suite's time
# is engine starts, one core each. Modules that share engines run on one worker, each other
# module on one worker (tests/support/suite_order.py); each worker's engines bind to its own cores.
exec "$BIN/python" -m pytest -q -p no:cacheprovider --durations=10 \
  -n "${MURGAT_TEST_WORKERS:-2}" --dist loadscope --no-loadscope-reorder --max-worker-restart=0 "$@"
