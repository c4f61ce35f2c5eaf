#!/usr/bin/env python
"""Prove that the tiny checkpoints from ``build_tiny_models.py`` run in vLLM (CPU) and transformers.

For each model directory this starts ONE ``vllm.LLM`` (in its own child process, so that only
one engine exists at a time and each is torn down completely), renders prompts with the
model's own processor chat template, and generates a constrained ``YES``/``NO`` verdict for:

* tiny-qwen3-omni: text, image (ndarray and PIL), video (ndarray frames, and a
  ``(frames, metadata)`` tuple), audio (``(waveform, 16000)``), image + audio in one request,
  and image + video + audio in one request;
* tiny-gemma3: text, image (ndarray and PIL).

Then it loads each directory with transformers (``AutoProcessor`` plus the concrete model
class) and runs one tiny ``generate`` with media.

Usage::

    .venv/bin/python scripts/check_tiny_models.py --models .local/models

Exit status 0 when every case passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

QWEN_DIR_NAME = "tiny-qwen3-omni"
GEMMA_DIR_NAME = "tiny-gemma3"
VERDICTS = ["YES", "NO"]
QUESTION = "Does the evidence support the claim? Answer YES or NO."
SAMPLE_RATE = 16000


# --------------------------------------------------------------------------------------------
# Synthetic media (deterministic, no files needed)
# --------------------------------------------------------------------------------------------


def make_image(size: int = 256):
    """An RGB uint8 HxWx3 array: a colour gradient with a bright square."""
    import numpy as np

    y, x = np.mgrid[0:size, 0:size]
    img = np.stack([x * 255 // (size - 1), y * 255 // (size - 1), (x + y) * 127 // (size - 1)], -1)
    img = img.astype(np.uint8)
    img[size // 4 : size // 2, size // 4 : size // 2] = 255
    return img


def make_video(frames: int = 4, size: int = 256):
    """T x H x W x 3 uint8 frames (T even, as Qwen's temporal patch of 2 wants)."""
    import numpy as np

    base = make_image(size)
    return np.stack([np.roll(base, shift=8 * t, axis=1) for t in range(frames)])


def make_audio(seconds: float = 2.0):
    """Mono float32 waveform at 16 kHz: a 440 Hz tone with a little noise."""
    import numpy as np

    t = np.arange(int(seconds * SAMPLE_RATE), dtype=np.float32) / SAMPLE_RATE
    rng = np.random.default_rng(0)
    wave = 0.3 * np.sin(2 * np.pi * 440.0 * t) + 0.01 * rng.standard_normal(t.shape)
    return wave.astype(np.float32)


def wav_base64(wave, sample_rate: int = SAMPLE_RATE) -> str:
    """16-bit PCM WAV bytes, base64-encoded (for OpenAI-style input_audio parts)."""
    import base64
    import io
    import wave as wavelib

    import numpy as np

    pcm = (np.clip(wave, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    buf = io.BytesIO()
    with wavelib.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def video_metadata(frames: int, fps: float) -> dict:
    return {
        "fps": fps,
        "duration": frames / fps,
        "total_num_frames": frames,
        "frames_indices": list(range(frames)),
        "video_backend": "numpy",
        "do_sample_frames": False,
    }


def messages_for(parts: list[str], system: str | None = "You are a strict judge.") -> list[dict]:
    content = [{"type": kind} for kind in parts] + [{"type": "text", "text": QUESTION}]
    messages = [{"role": "user", "content": content}]
    if system:
        messages.insert(0, {"role": "system", "content": [{"type": "text", "text": system}]})
    return messages


# --------------------------------------------------------------------------------------------
# vLLM (runs in a child process: one engine per process)
# --------------------------------------------------------------------------------------------


def vllm_cases(kind: str) -> list[tuple[str, list[str], dict, dict]]:
    """(name, media parts for the template, multi_modal_data, mm_processor_kwargs)."""
    from PIL import Image

    image = make_image()
    cases = [
        ("text", [], {}, {}),
        ("image ndarray HxWx3 uint8", ["image"], {"image": image}, {}),
        ("image PIL", ["image"], {"image": Image.fromarray(image)}, {}),
    ]
    if kind == "qwen":
        video = make_video(4)
        audio = (make_audio(2.0), SAMPLE_RATE)
        cases += [
            # fps only feeds the temporal position ids (second_per_grid = 2 / fps).
            ("video ndarray TxHxWx3 + fps kwarg", ["video"], {"video": video}, {"fps": 2.0}),
            ("video ndarray, no kwargs", ["video"], {"video": video}, {}),
            (
                "video (frames, metadata) tuple",
                ["video"],
                {"video": (video, video_metadata(len(video), 2.0))},
                {"fps": 2.0},
            ),
            ("audio (float32 16 kHz, 16000)", ["audio"], {"audio": audio}, {}),
            ("image + audio", ["image", "audio"], {"image": image, "audio": audio}, {}),
            (
                "image + video + audio",
                ["image", "video", "audio"],
                {"image": image, "video": video, "audio": audio},
                {"fps": 2.0},
            ),
        ]
    return cases


def run_vllm_worker(model_dir: Path, kind: str, result_path: Path) -> int:
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from PIL import Image
    from transformers import AutoProcessor
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    processor = AutoProcessor.from_pretrained(model_dir)
    tokenizer = processor.tokenizer
    limits = {"image": 1, "video": 1, "audio": 1} if kind == "qwen" else {"image": 1}

    started = time.perf_counter()
    llm = LLM(
        model=str(model_dir),
        max_model_len=4096,
        enforce_eager=True,
        limit_mm_per_prompt=limits,
        structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True},
        seed=0,
    )
    startup_s = time.perf_counter() - started
    print(f"[{kind}] LLM ready in {startup_s:.1f} s", flush=True)

    params = SamplingParams(
        max_tokens=8,
        temperature=0.0,
        structured_outputs=StructuredOutputsParams(choice=VERDICTS),
    )
    media_ids = {
        name: tokenizer.convert_tokens_to_ids(tok)
        for name, tok in {
            "image": getattr(tokenizer, "image_token", None),
            "video": getattr(tokenizer, "video_token", None),
            "audio": getattr(tokenizer, "audio_token", None),
        }.items()
        if tok
    }

    results = []
    for name, parts, mm_data, mm_kwargs in vllm_cases(kind):
        text = processor.apply_chat_template(
            messages_for(parts), tokenize=False, add_generation_prompt=True
        )
        # The Gemma template starts with <bos> (as the real one does) and vLLM's tokenizer
        # adds <bos> itself when it encodes a text prompt: drop ours to avoid two.
        if tokenizer.bos_token and text.startswith(tokenizer.bos_token):
            text = text[len(tokenizer.bos_token) :]
        prompt = {"prompt": text}
        if mm_data:
            prompt["multi_modal_data"] = mm_data
        if mm_kwargs:
            prompt["mm_processor_kwargs"] = mm_kwargs
        t0 = time.perf_counter()
        try:
            out = llm.generate([prompt], params, use_tqdm=False)[0]
            answer = out.outputs[0].text
            ids = list(out.prompt_token_ids or [])
            placeholders = {m: ids.count(i) for m, i in media_ids.items() if ids.count(i)}
            ok = answer in VERDICTS
            detail = {
                "answer": answer,
                "prompt_tokens": len(ids),
                "first_ids": ids[:3],
                "placeholder_tokens": placeholders,
            }
        except Exception as exc:  # report every case, keep going
            ok = False
            detail = {
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-2000:],
            }
        took = time.perf_counter() - t0
        results.append({"case": name, "ok": ok, "seconds": round(took, 3), **detail})
        status = "PASS" if ok else "FAIL"
        shown = {k: v for k, v in detail.items() if k != "trace"}
        print(f"[{kind}] {status} {name}: {shown} ({took:.2f} s)", flush=True)
        if not ok and "trace" in detail:
            print(detail["trace"], flush=True)

    # Extra: the same engine through llm.chat, which renders our template itself (vLLM
    # detects its content format as "openai", i.e. it loops over content parts).
    chat_parts: list[dict] = [{"type": "image_pil", "image_pil": Image.fromarray(make_image())}]
    if kind == "qwen":
        chat_parts.append(
            {
                "type": "input_audio",
                "input_audio": {"data": wav_base64(make_audio(2.0)), "format": "wav"},
            }
        )
    chat_parts.append({"type": "text", "text": QUESTION})
    conversation = [
        {"role": "system", "content": "You are a strict judge."},
        {"role": "user", "content": chat_parts},
    ]
    name = "llm.chat " + " + ".join(p["type"] for p in chat_parts[:-1])
    t0 = time.perf_counter()
    try:
        out = llm.chat([conversation], params, use_tqdm=False)[0]
        answer = out.outputs[0].text
        ids = list(out.prompt_token_ids or [])
        ok = answer in VERDICTS
        detail = {
            "answer": answer,
            "prompt_tokens": len(ids),
            "first_ids": ids[:3],
            "placeholder_tokens": {m: ids.count(i) for m, i in media_ids.items() if ids.count(i)},
        }
    except Exception as exc:
        ok = False
        detail = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
    took = time.perf_counter() - t0
    results.append({"case": name, "ok": ok, "seconds": round(took, 3), **detail})
    shown = {k: v for k, v in detail.items() if k != "trace"}
    print(f"[{kind}] {'PASS' if ok else 'FAIL'} {name}: {shown} ({took:.2f} s)", flush=True)
    if not ok and "trace" in detail:
        print(detail["trace"], flush=True)

    result_path.write_text(json.dumps({"startup_s": startup_s, "cases": results}, indent=2))
    return 0 if all(r["ok"] for r in results) else 1


def run_vllm_check(model_dir: Path, kind: str, timeout_s: int) -> tuple[bool, dict]:
    result_path = model_dir.parent / f".check-{kind}-vllm.json"
    result_path.unlink(missing_ok=True)
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE=os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"))
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--vllm-worker",
        kind,
        "--model-dir",
        str(model_dir),
        "--result",
        str(result_path),
    ]
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, timeout=timeout_s)
    wall = time.perf_counter() - started
    report = json.loads(result_path.read_text()) if result_path.exists() else {"cases": []}
    result_path.unlink(missing_ok=True)
    report["wall_s"] = round(wall, 1)
    ok = proc.returncode == 0 and bool(report["cases"]) and all(c["ok"] for c in report["cases"])
    return ok, report


# --------------------------------------------------------------------------------------------
# transformers
# --------------------------------------------------------------------------------------------


def run_transformers_check(model_dir: Path, kind: str) -> list[dict]:
    import torch
    from PIL import Image
    from transformers import AutoProcessor

    torch.manual_seed(0)
    processor = AutoProcessor.from_pretrained(model_dir)
    image = Image.fromarray(make_image())
    results = []

    def record(name: str, fn) -> None:
        t0 = time.perf_counter()
        try:
            detail = fn()
            ok = True
        except Exception as exc:
            ok, detail = False, {"error": f"{type(exc).__name__}: {exc}"}
            traceback.print_exc()
        took = time.perf_counter() - t0
        results.append({"case": name, "ok": ok, "seconds": round(took, 3), **detail})
        print(
            f"[{kind}/transformers] {'PASS' if ok else 'FAIL'} {name}: {detail} ({took:.2f} s)",
            flush=True,
        )

    if kind == "qwen":
        from transformers import Qwen3OmniMoeForConditionalGeneration

        model, info = Qwen3OmniMoeForConditionalGeneration.from_pretrained(
            model_dir, output_loading_info=True
        )
        model.eval()
        problems = {k: v for k, v in info.items() if v}
        if problems:
            raise RuntimeError(f"loading info not clean: {problems}")
        text = processor.apply_chat_template(
            messages_for(["image", "video", "audio"]), tokenize=False, add_generation_prompt=True
        )
        inputs = processor(
            text=text,
            images=[image],
            videos=[make_video(4)],
            audio=[make_audio(2.0)],
            sampling_rate=SAMPLE_RATE,
            fps=2.0,
            return_tensors="pt",
        )
        eos = processor.tokenizer.convert_tokens_to_ids("<|im_end|>")

        def thinker_generate():
            with torch.no_grad():
                out = model.thinker.generate(**inputs, max_new_tokens=4, do_sample=False)
            new = out[0, inputs["input_ids"].shape[1] :]
            return {
                "class": type(model.thinker).__name__,
                "prompt_tokens": int(inputs["input_ids"].shape[1]),
                "new_tokens": new.tolist(),
                "text": processor.decode(new),
            }

        def top_level_generate():
            with torch.no_grad():
                # The wrapper reads thinker_* kwargs (its max_new_tokens default is 1024 and its
                # default eos id is the real checkpoint's, outside this vocabulary).
                out = model.generate(
                    **inputs,
                    return_audio=False,
                    thinker_max_new_tokens=4,
                    thinker_do_sample=False,
                    thinker_eos_token_id=eos,
                )
            seq = (
                out.sequences
                if hasattr(out, "sequences")
                else (out[0] if isinstance(out, tuple) else out)
            )
            new = seq[0, inputs["input_ids"].shape[1] :]
            return {"class": type(model).__name__, "new_tokens": new.tolist()}

        record("model.thinker.generate (image+video+audio)", thinker_generate)
        record("model.generate(return_audio=False) (image+video+audio)", top_level_generate)
    else:
        from transformers import AutoModelForImageTextToText

        model, info = AutoModelForImageTextToText.from_pretrained(
            model_dir, output_loading_info=True
        )
        model.eval()
        problems = {k: v for k, v in info.items() if v}
        if problems:
            raise RuntimeError(f"loading info not clean: {problems}")
        text = processor.apply_chat_template(
            messages_for(["image"]), tokenize=False, add_generation_prompt=True
        )
        # The template already starts with <bos>.
        inputs = processor(text=text, images=[image], add_special_tokens=False, return_tensors="pt")

        def gemma_generate():
            with torch.no_grad():
                out = model.generate(**inputs, max_new_tokens=4, do_sample=False)
            new = out[0, inputs["input_ids"].shape[1] :]
            return {
                "class": type(model).__name__,
                "prompt_tokens": int(inputs["input_ids"].shape[1]),
                "new_tokens": new.tolist(),
                "text": processor.decode(new),
            }

        record("generate (image)", gemma_generate)
    return results


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", type=Path, default=Path(".local/models"), help="folder of model dirs"
    )
    parser.add_argument(
        "--only", choices=["qwen", "gemma"], action="append", help="check only this model"
    )
    parser.add_argument("--skip-vllm", action="store_true")
    parser.add_argument("--skip-transformers", action="store_true")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per vLLM child")
    # internal: the vLLM child process
    parser.add_argument("--vllm-worker", choices=["qwen", "gemma"], help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.vllm_worker:
        return run_vllm_worker(args.model_dir, args.vllm_worker, args.result)

    dirs = {"qwen": args.models / QWEN_DIR_NAME, "gemma": args.models / GEMMA_DIR_NAME}
    summary: dict[str, dict] = {}
    all_ok = True
    for kind in args.only or ["qwen", "gemma"]:
        model_dir = dirs[kind]
        if not (model_dir / "config.json").exists():
            print(f"missing {model_dir}: run scripts/build_tiny_models.py first", file=sys.stderr)
            return 2
        entry: dict = {}
        if not args.skip_vllm:
            ok, report = run_vllm_check(model_dir, kind, args.timeout)
            entry["vllm"] = report
            all_ok &= ok
        if not args.skip_transformers:
            results = run_transformers_check(model_dir, kind)
            entry["transformers"] = results
            all_ok &= all(r["ok"] for r in results)
        summary[kind] = entry

    print("\nSUMMARY")
    for kind, entry in summary.items():
        if "vllm" in entry:
            rep = entry["vllm"]
            print(
                f"  {kind} vLLM: startup {rep.get('startup_s', float('nan')):.1f} s,"
                f" child wall {rep['wall_s']} s"
            )
            for case in rep["cases"]:
                outcome = case.get("answer", case.get("error"))
                print(f"    {'PASS' if case['ok'] else 'FAIL'} {case['case']}: {outcome}")
        for case in entry.get("transformers", []):
            print(f"  {kind} transformers: {'PASS' if case['ok'] else 'FAIL'} {case['case']}")
    print("ALL PASSED" if all_ok else "SOME CASES FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
