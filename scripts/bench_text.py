"""Time the text steps of `murgat segment` (cleaning, sentence splitting, citation parsing) on
long synthetic responses, in both modes, and print how the time grows with the length.

Text processing is meant to be linear in the response's length: the 8k/1k ratio should be close
to 8 (a quadratic step shows as ~64). Then one response of about 1 MB, and hostile shapes (long
runs of spaces or blank lines, unclosed brackets, quotes, `<think>` and `\\boxed{`, nested LaTeX)
at 1x and 8x their size. Asserts nothing. Usage:
    python scripts/bench_text.py [--sizes 1000 2000 4000 8000] [--repeat 3] [--mb 1]
"""

from __future__ import annotations

import argparse
import random
import time

from murgat_local.text.segment import segment_response

# Sentences as models write them: citations in every accepted shape, abbreviations, initials,
# decimals, ellipses, quotes, prose parentheses, unusable citations and CJK.
SENTENCES = [
    "The man points at the screen (visual, 0:12).",
    "Dr. Lee says the price is 3.5 dollars (audio, 0:20-0:24).",
    'She shouts "Stop. Now!" and leaves (audio, 1:02; visual, 1:03).',
    "A bell rings, e.g. twice, at noon (AUDIO, 1:20 - 1:30).",
    "J. Smith waits... and waves (visual, 0:05–0:07).",
    "The sign reads 12.75 km (visual, 1:02:03).",
    "A dog barks (audio, 0:01).(visual, 0:02)",
    "He leaves (at 0:12) and returns (see above) [visual, 0:14].",
    "The clock shows 99:99 (visual, 99:99).",
    "An odd smell appears (smell, 0:10).",
    "Nothing is cited here, vs. the earlier claim!",
    "Is the car red (visual, 0:30-0:10)?",
    "他走了（visual, 0:03）。",
    "她笑了。",
    "The U.S. flag waves at 7 a.m. on Jan. 5 (visual, 0:40.5-0:41.25).",
    "The speaker (a tall man) mentions Mt. Fuji, approx. 3.7 km high (audio, 2:10).",
]


def make_response(n: int, seed: int = 0, lines_every: int = 0) -> str:
    """A generation of `n` sentences; one paragraph, or a line break (and list items) every
    `lines_every` sentences."""
    rng = random.Random(seed)
    parts = ["<think>scratch (visual, 0:01)</think>\n**Reasoning:** "]
    for i in range(n):
        if lines_every and i and i % lines_every == 0:
            parts.append("\n" + rng.choice(["- ", "2. ", "* ", "", "b) "]))
        parts.append(rng.choice(SENTENCES))
        parts.append(" ")
    parts.append("\n**Answer:** (B) the man")
    return "".join(parts)


# Shapes that made a step rescan the text from many starting points: n -> text.
HOSTILE = {
    "spaces": lambda n: "A" + " " * (40 * n) + "x (visual, 0:01).",
    "blank lines": lambda n: "A.\n" + " \n" * (20 * n) + "Answer" + " " * 10,
    "unclosed ( [ quotes": lambda n: "(a. [b. “c. " * (4 * n),
    "citation chain": lambda n: "He waves." + "(visual, 0:01)." * (3 * n) + " and more.",
    "spaces in a citation": lambda n: "A (visual," + " " * (40 * n) + "x).",
    "<think> / \\boxed{": lambda n: "<think>\\boxed{a " * (4 * n),
    "nested \\text{": lambda n: "Answer: " + "\\text{" * (6 * n) + "B" + "}" * (6 * n),
    "a.a.a": lambda n: "a.A." * (10 * n),
}


def _time(text: str, compat: str | None, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        segment_response(text, compat)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    segment_response("warm up (vision: 0:01). Answer: A")  # lazy imports out of the first timing
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings")
    ap.add_argument("--mb", type=float, default=1.0, help="size of the one large response (MB)")
    args = ap.parse_args()
    from murgat_local.engines.cpu import cpu_info

    print(f"machine: {cpu_info().line()}", flush=True)  # the CPU its figures came from
    for layout, every in (("one paragraph", 0), ("a line every 8 sentences", 8)):
        print(f"responses as {layout}:")
        print(f"  {'sentences':>9} {'KB':>7} {'default s':>10} {'reference s':>12}")
        times: dict[str, list[float]] = {"default": [], "reference": []}
        for n in args.sizes:
            text = make_response(n, lines_every=every)
            d = _time(text, None, args.repeat)
            r = _time(text, "reference", args.repeat)
            times["default"].append(d)
            times["reference"].append(r)
            print(f"  {n:>9} {len(text.encode()) / 1000:>7.0f} {d:>10.3f} {r:>12.3f}")
        lo, hi = args.sizes[0], args.sizes[-1]
        for mode, ts in times.items():
            print(
                f"  {mode}: {hi}/{lo} sentences time ratio {ts[-1] / ts[0]:.1f} (linear: {hi / lo:g})"
            )
    target = int(args.mb * 1_000_000)
    n = max(1, target // 45)
    text = make_response(n)
    while len(text.encode()) < target:
        n = int(n * target / len(text.encode())) + 1
        text = make_response(n)
    print(
        f"one {len(text.encode()) / 1e6:.2f} MB response ({n} sentences): "
        f"default {_time(text, None, 1):.3f} s, reference {_time(text, 'reference', 1):.3f} s"
    )
    print("hostile shapes, 1x and 8x (ratio; linear: 8):")
    for name, make in HOSTILE.items():
        small, big = make(1000), make(8000)
        cells = []
        for compat in (None, "reference"):
            a, b = _time(small, compat, args.repeat), _time(big, compat, args.repeat)
            cells.append(f"{compat or 'default'} {a:.3f} -> {b:.3f} s (x{b / a:.1f})")
        print(f"  {name:<22} {len(big.encode()) / 1e3:>5.0f} KB  " + "   ".join(cells))


if __name__ == "__main__":
    main()
