#!/usr/bin/env bash
# The README's worked example ("Swap in and choose open judges"), run for real on the bundled
# sample: two judge setups score samples/responses.jsonl, then `murgat meta-eval` measures both
# against samples/labels.jsonl (labels written from how the sample media are built, not by a
# model), chooses the better judge per stage on half the labelled responses and tries to certify
# a confidence threshold on the other half, then scores again with the chosen judges, escalating
# what they are not certified to keep to the labels (`human:`). Everything lands in out/worked/,
# started afresh so the timing is that of a cold run.
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
echo "[worked] murgat meta-eval: agreement per stage, the best judges, certified thresholds"
timeout -k 10 1200 .venv/bin/murgat meta-eval "$OUT/smollm2" "$OUT/gemma3" \
  --human samples/labels.jsonl --out "$OUT/meta" --certify 0.9 --alpha 0.1 \
  --select "$OUT/best.toml"
echo "[worked] murgat score with the chosen judges; what they are unsure of goes to the labels"
timeout -k 10 1200 .venv/bin/murgat score samples/responses.jsonl --media-root .local/sample_media \
  --cache "$OUT/cache.sqlite" --config "$OUT/best.toml" --out "$OUT/escalated" \
  --escalate-to human:samples/labels.jsonl
