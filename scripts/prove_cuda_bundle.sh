#!/usr/bin/env bash
# Proves the GPU route's bundle on this machine, for real, with no network at install time. Not
# part of CI: it downloads several GB (vLLM 0.32's CUDA build, its CUDA 13 torch and the nvidia
# libraries) and needs about 30 GB of disk.
#
#   bash scripts/prove_cuda_bundle.sh OUT
#
# 1. `murgat bundle OUT/cuda-3.11 --target cuda --python 3.11 --test-models`, from set-up's
#    wheelhouse and the package index pip is configured with;
# 2. in a network namespace with only loopback (`unshare -rn`), pip's configuration hidden
#    (PIP_CONFIG_FILE=/dev/null, no PIP_FIND_LINKS) and a fresh HOME:
#    `bash OUT/cuda-3.11/install.sh OUT/venv-3.11 --allow-no-gpu` (this box has no GPU);
# 3. in that venv, still offline: `import torch, vllm`, torch.version.cuda is 13.x,
#    `murgat models --fit --gpu h100 --json` runs, `murgat smoke --model tiny-gemma3` refuses
#    with one line naming the missing GPU;
# 4. a model file taken out of the bundle stops a second install, naming the file;
# 5. `murgat bundle OUT/cuda-3.12 --target cuda --python 3.12`, and every wheel's tags checked
#    against CPython 3.12 (packaging.tags, on the glibc MANIFEST.json names).
# Writes OUT/figures.txt (download size, build and install times) and OUT/prove.log; exit 0
# when every check passed, 1 at the first that failed (named).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash scripts/prove_cuda_bundle.sh OUT" >&2; exit 2; }
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MURGAT="$ROOT/.venv/bin/murgat"
PY="$ROOT/.venv/bin/python"
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
FIGURES="$OUT/figures.txt"
: > "$FIGURES"

say() { printf '[prove] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
figure() { say "$*"; printf '%s\n' "$*" >> "$FIGURES"; }
rx_bytes() { awk -F'[: ]+' 'NR > 2 && $2 != "lo" { n += $3 } END { printf "%.0f\n", n }' /proc/net/dev; }
# Every wheel really fetched (pip's cache would hide the download's size and time).
export PIP_NO_CACHE_DIR=1

unshare -rn true 2>/dev/null || fail "unshare -rn (a user and network namespace) is not allowed here"
BOX_PATH=/usr/local/bin:/usr/bin:/bin
IP=$(PATH=$PATH:/usr/sbin:/sbin command -v ip) || fail "no ip command (Debian: iproute2)"
PATH=$BOX_PATH command -v python3.11 >/dev/null || fail "no python3.11 on $BOX_PATH (the box's Python)"

# offline COMMAND: bash COMMAND with only loopback, pip's configuration hidden, a fresh HOME.
offline() {
  env -i PATH="$BOX_PATH" HOME="$OUT/home" LANG=C.UTF-8 PIP_CONFIG_FILE=/dev/null \
    unshare -rn bash -c "'$IP' link set lo up && cd / && $1"
}

# 1. The 3.11 bundle with the test models.
BUNDLE="$OUT/cuda-3.11"
say "1. murgat bundle $BUNDLE --target cuda --python 3.11 --test-models"
rx=$(rx_bytes)
start=$(date +%s)
"$MURGAT" bundle "$BUNDLE" --target cuda --python 3.11 --test-models \
  || fail "murgat bundle --python 3.11"
build_s=$(( $(date +%s) - start ))
got=$(( $(rx_bytes) - rx ))
size=$(du -sb "$BUNDLE" | cut -f1)
wheels=$(du -sb "$BUNDLE/wheels" | cut -f1)
# What came from the index rather than set-up's wheelhouse (.local/wheels).
fetched=$(cd "$BUNDLE/wheels" && for w in *.whl; do [ -e "$ROOT/.local/wheels/$w" ] || stat -c %s "$w"; done \
  | awk '{ n += $1; c++ } END { printf "%d wheels, %.0f MB\n", c, n / 1e6 }')
figure "build (3.11, --test-models): ${build_s} s; fetched from the index: $fetched; received over the network meanwhile: $(( got / 1000000 )) MB; bundle $(( size / 1000000 )) MB, of which wheels $(( wheels / 1000000 )) MB"
"$PY" - "$BUNDLE/MANIFEST.json" <<'PY' | tee -a "$FIGURES" >&2 || fail "the 3.11 MANIFEST.json"
import json, sys
info = json.load(open(sys.argv[1]))["bundle"]
assert info["python"] == "3.11" and info["target"] == "cuda", info
assert info["cuda"] and info["cuda"]["version"].startswith("13.") and info["cuda"]["driver"] == 580, info["cuda"]
print(f"MANIFEST: platform {info['platform']}, torch for CUDA {info['cuda']['version']} "
      f"(driver {info['cuda']['driver']}+), {info['installed_bytes'] / 1e9:.1f} GB installed")
PY

# 2. The offline install.
rm -rf "$OUT/home" "$OUT/venv-3.11"
mkdir -p "$OUT/home"
say "2. offline: bash $BUNDLE/install.sh $OUT/venv-3.11 --allow-no-gpu"
start=$(date +%s)
offline "bash '$BUNDLE/install.sh' '$OUT/venv-3.11' --allow-no-gpu" \
  || fail "the offline install (above: the step)"
figure "offline install (unshare -rn, 3.11): $(( $(date +%s) - start )) s"

# 3. The installed route, still offline.
VPY="$OUT/venv-3.11/bin/python"
VMURGAT="$OUT/venv-3.11/bin/murgat"
say "3. import torch, vllm; torch.version.cuda"
offline "'$VPY' -c 'import torch, vllm; print(torch.__version__, torch.version.cuda, vllm.__version__); assert (torch.version.cuda or \"\").startswith(\"13\"), torch.version.cuda'" \
  | tee -a "$FIGURES" >&2 || fail "import torch, vllm with torch for CUDA 13"
say "3. murgat models --fit --gpu h100 --json"
offline "'$VMURGAT' models --fit --gpu h100 --json" > "$OUT/fit.json" \
  || fail "murgat models --fit --gpu h100 --json"
"$PY" -c 'import json, sys; rows = json.load(open(sys.argv[1])); assert rows, "empty"' \
  "$OUT/fit.json" || fail "murgat models --fit --json printed no JSON list"
say "3. murgat smoke --model tiny-gemma3 refuses"
set +e
offline "'$VMURGAT' smoke --model tiny-gemma3" > "$OUT/smoke.out" 2> "$OUT/smoke.err"
rc=$?
set -e
lines=$(grep -c . "$OUT/smoke.err" || true)
[ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -q "no NVIDIA GPU" "$OUT/smoke.err" \
  || { cat "$OUT/smoke.err" >&2; fail "murgat smoke: exit $rc, $lines lines (want 1, one line naming the missing GPU)"; }
figure "murgat smoke --model tiny-gemma3 (exit $rc): $(cat "$OUT/smoke.err")"

# 4. A model file missing from the bundle.
FILE=$(cd "$BUNDLE" && find models -name config.json | sort | head -1)
[ -n "$FILE" ] || fail "no model in the bundle"
say "4. without $FILE the install stops, naming it"
mv "$BUNDLE/$FILE" "$OUT/aside"
set +e
offline "bash '$BUNDLE/install.sh' '$OUT/venv-missing' --allow-no-gpu" 2> "$OUT/missing.err"
rc=$?
set -e
mv "$OUT/aside" "$BUNDLE/$FILE"
[ "$rc" != 0 ] && grep -q "$BUNDLE/$FILE: missing" "$OUT/missing.err" \
  || { cat "$OUT/missing.err" >&2; fail "the install went on without $FILE (exit $rc)"; }
[ ! -e "$OUT/venv-missing/bin/python" ] || fail "a venv was made before the check refused"
figure "missing $FILE: install.sh exit $rc, $(grep -c "missing" "$OUT/missing.err") line(s) naming it"

# 5. The 3.12 bundle, every wheel for cp312.
say "5. murgat bundle $OUT/cuda-3.12 --target cuda --python 3.12"
start=$(date +%s)
rx=$(rx_bytes)
"$MURGAT" bundle "$OUT/cuda-3.12" --target cuda --python 3.12 || fail "murgat bundle --python 3.12"
figure "build (3.12, no models): $(( $(date +%s) - start )) s; received over the network meanwhile: $(( ($(rx_bytes) - rx) / 1000000 )) MB"
"$PY" - "$OUT/cuda-3.12" <<'PY' | tee -a "$FIGURES" >&2 || fail "a 3.12 wheel CPython 3.12 does not take"
import json, pathlib, re, sys
from packaging.tags import compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

out = pathlib.Path(sys.argv[1])
info = json.loads((out / "MANIFEST.json").read_text())["bundle"]
major, minor, machine = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", info["platform"]).groups()
plats = [f"manylinux_{major}_{n}_{machine}" for n in range(int(minor), 4, -1)]
plats += [f"{old}_{machine}" for old in ("manylinux2014", "manylinux2010", "manylinux1")]
takes = set(cpython_tags((3, 12), ["cp312"], plats)) | set(compatible_tags((3, 12), "cp312", plats))
wheels = sorted((out / "wheels").glob("*.whl"))
bad = [w.name for w in wheels if not parse_wheel_filename(w.name)[3] & takes]
assert not bad, bad
assert info["python"] == "3.12" and info["cuda"]["version"].startswith("13."), info
print(f"3.12 bundle: {len(wheels)} wheels, every one taken by CPython 3.12 on {info['platform']}")
PY
say "every check passed; figures in $FIGURES"
