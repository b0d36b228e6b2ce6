"""One captioned scene row: scene image + keywords / sentence / paragraph / grounded captions + QA."""
from __future__ import annotations

from typing import Any

from corpus.errors import ConfigError
from synth.pairs import pair_row, png_bytes
from synth.rng import item_id, item_rng
from synth.scene_captions import scene_captions, scene_qa
from synth.scenes import make_scene

MIN_SIDE, MAX_SIDE = 64, 2048


def check_scene_params(width: int, height: int, max_items: int) -> None:
    for name, v in (("width", width), ("height", height)):
        if not isinstance(v, int) or not MIN_SIDE <= v <= MAX_SIDE:
            raise ConfigError(f"scene {name} must be an integer between {MIN_SIDE} and {MAX_SIDE} pixels, got {v!r}")
    if not isinstance(max_items, int) or not 1 <= max_items <= 12:
        raise ConfigError(f"max items per scene must be between 1 and 12, got {max_items!r}")


def make_captioned_scene(seed: int, index: int, width: int = 224, height: int = 224, max_items: int = 4) -> dict[str, Any]:
    """Row `index` of a caption run seeded with `seed` (a PAIRS row)."""
    rng = item_rng(seed, "caption", index)
    img, scene = make_scene(rng, width, height, max_items)
    caps = scene_captions(scene, rng)
    qa = scene_qa(scene, rng)
    meta = {"kind": "caption", "scene": scene, "captions": caps, "qa_args": [q["args"] for q in qa],
            "seed": seed, "index": index}
    return pair_row(item_id("caption", seed, index), png_bytes(img), "caption", caps["sentence"], "en", qa, meta,
                    image=img)
