#!/usr/bin/env bash
# The README's worked example ("Swap in and choose open judges"), run for real on the bundled
# sample: two judge setups score samples/responses.jsonl, then `murgat meta-eval` measures both
# against samples/labels.jsonl (labels written from how the sample media are built, not by a
# model), writes the better judge per stage as a config, tries to certify a confidence threshold
# per stage, and scores again with that config. Everything lands in out/worked/, started afresh
# so the timing is that of a cold run.
# The tiny judges prove the plumbing, not judge quality; six responses are far too few to
# certify anything (see docs/meta-eval.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
OUT=out/worked
rm -rf "$OUT"
mkdir -p "$OUT"
# One cache for both runs: the shared judge and decomposer are asked once.
COMMON=(samples/responses.jsonl --media-root .local/sample_media --cache "$OUT/cache.sqlite"
  --judge tiny-qwen3-omni --decomposer smollm2-135m-instruct)
echo "[worked] murgat score, verifier smollm2-135m-instruct (the sample's own setup)"
timeout -k 10 1200 .venv/bin/murgat score "${COMMON[@]}" --out "$OUT/smollm2" \
  --verifier smollm2-135m-instruct
echo "[worked] murgat score, verifier gemma3-270m"
timeout -k 10 1200 .venv/bin/murgat score "${COMMON[@]}" --out "$OUT/gemma3" \
  --verifier gemma3-270m
echo "[worked] murgat meta-eval against samples/labels.jsonl: agreement and the best judge per stage"
timeout -k 10 1200 .venv/bin/murgat meta-eval "$OUT/smollm2" "$OUT/gemma3" \
  --human samples/labels.jsonl --out "$OUT/meta" --select "$OUT/best.toml"
# Apart from --select: in one call the choice would be made on half the labels (3 responses),
# where the facts the shared entailer is measured on are all labelled entailed, so its balanced
# accuracy is undefined and meta-eval stops ("no judge of the entail stage could be measured").
echo "[worked] murgat meta-eval --certify 0.9 --alpha 0.1"
timeout -k 10 1200 .venv/bin/murgat meta-eval "$OUT/smollm2" "$OUT/gemma3" \
  --human samples/labels.jsonl --out "$OUT/certify" --certify 0.9 --alpha 0.1
echo "[worked] murgat score with the chosen judges (every call is in the cache)"
timeout -k 10 1200 .venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --cache "$OUT/cache.sqlite" --config "$OUT/best.toml" --out "$OUT/best"
