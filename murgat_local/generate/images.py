"""Images a question is asked about (Video-MMMU Adaptation's `<image 1>`), beside the video.

A responder that takes images gets each one after the video, captioned with its number, and
the image's digest enters the call's cache identity. An image-only responder that already gets
the video as frames gives up as many frames as there are images (`plan_media(...,
reserve_images=n)`), so the model's image limit holds. A responder that takes no images gets the question with a note that the image was not
shown. Either way the row's `media.images` says what happened.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import numpy as np

from ..engines import ImagePart, MediaPart, Preset
from ..inputs.datasets import DatasetImage
from ..inputs.limits import DEFAULT_LIMITS, InputLimits, image_problem
from .media import ResponderPlan


def attach(plan: ResponderPlan, images: Sequence[DatasetImage], preset: Preset) -> ResponderPlan:
    """`plan` with the question's images added, or with the note that they were not shown."""
    if not images:
        return plan
    record = {**plan.record}
    if "image" not in preset.modalities:
        record["images"] = {
            "shown": 0,
            "attached": len(images),
            "missing": f"model {preset.name} takes no images: the question's image was not shown",
        }
        return ResponderPlan(plan.keys, plan.captions, record)
    captions = list(plan.captions) if plan.captions else [None] * _parts_before(plan)
    captions += [f"[image {i + 1}, the question's attached image]" for i in range(len(images))]
    record["images"] = {
        "shown": len(images),
        "attached": len(images),
        "sha256": [im.sha256 for im in images],
    }
    keys = plan.keys + tuple(("image", im.sha256) for im in images)
    return ResponderPlan(keys, tuple(captions), record)


def _parts_before(plan: ResponderPlan) -> int:
    """How many media parts the plan's cut gives (a clip is one part; frames as images are one
    part each; the soundtrack is one)."""
    visual, audio = plan.record.get("visual"), plan.record.get("audio")
    n = 0
    if visual is not None:
        n += visual["frames"] if visual["as_images"] else 1
    if audio is not None:
        n += 1
    return n


def image_parts(
    images: Sequence[DatasetImage], limits: InputLimits = DEFAULT_LIMITS
) -> tuple[MediaPart, ...]:
    """The images decoded to RGB pixels; ValueError naming the limit, before anything is decoded,
    for one whose header says it is larger than `limits` allow (the call's error)."""
    from PIL import Image

    parts = []
    for k, im in enumerate(images):
        why = image_problem(f"image {k + 1} ({im.name})", im.data, limits)
        if why is not None:
            raise ValueError(why)
        with Image.open(io.BytesIO(im.data)) as pic:
            parts.append(ImagePart(np.asarray(pic.convert("RGB"))))
    return tuple(parts)


def with_images(
    media: Callable[[], tuple],
    plan: ResponderPlan,
    images: Sequence[DatasetImage],
    limits: InputLimits = DEFAULT_LIMITS,
) -> Callable[[], tuple]:
    """The call's media: the video's parts, then the images when the plan shows them."""
    shown = (plan.record.get("images") or {}).get("shown", 0)
    if not shown:
        return media
    return lambda: tuple(media()) + image_parts(images, limits)


def images_note(record: dict) -> str:
    missing = (record.get("images") or {}).get("missing")
    return "(The question refers to an image that is not shown to you.)\n" if missing else ""
