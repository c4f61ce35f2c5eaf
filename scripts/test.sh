#!/usr/bin/env bash
# Set up (idempotent), run the checks (style, types, import layers; configured in pyproject.toml),
# then the whole test suite, which ends with its ten slowest tests.
# Arguments go to pytest: `bash scripts/test.sh tests/unit` runs the unit tests only (the
# checks still run first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --environment
BIN=.venv/bin
CODE=(murgat_local scripts tests)

# The checks need only the environment: they run while the rest of set-up (the test models and
# the sample media, scripts/setup.sh --data) is built beside them; their output is held until
# set-up has ended, so the two do not interleave.
bash scripts/setup.sh --data &
DATA=$!
CHECKS=$(mktemp)

# check NAME COMMAND...: runs one check; on a failure, says which and returns 1.
check() {
  local name=$1
  shift
  echo "[check] $name"
  if ! "$@"; then
    echo "[check] failed: $name ($*)"
    return 1
  fi
}
checks() {
  check "ruff check" "$BIN/ruff" check "${CODE[@]}" &&
    check "ruff format" "$BIN/ruff" format --check "${CODE[@]}" &&
    check "mypy" "$BIN/mypy" --cache-dir .local/mypy-cache &&
    check "import layers" "$BIN/lint-imports" --no-logo --cache-dir .local/import-linter-cache
}
CHECKED=0
checks > "$CHECKS" 2>&1 || CHECKED=$?
SET_UP=0
wait "$DATA" || SET_UP=$?
cat "$CHECKS"
rm -f "$CHECKS"
[ "$SET_UP" = 0 ] || exit "$SET_UP"
[ "$CHECKED" = 0 ] || exit 1
# Two workers (pytest-xdist; MURGAT_TEST_WORKERS, 0 for one process): most of the suite's time
# is engine starts, one core each. Modules that share engines run on one worker, each other
# module on one worker (tests/support/suite_order.py); each worker's engines bind to its own cores.
exec "$BIN/python" -m pytest -q -p no:cacheprovider --durations=10 \
  -n "${MURGAT_TEST_WORKERS:-2}" --dist loadscope --no-loadscope-reorder --max-worker-restart=0 "$@"
