"""Colored-shape image/caption pairs drawn with Pillow: a tiny, fully known PAIRS dataset.

Used by tests and as a stand-in when no synthetic captions are at hand (train-clip --toy N).
Captions name color, shape, size and position, so a CLIP model can learn them in a few hundred steps.
"""
from __future__ import annotations

import hashlib
import io

import numpy as np
import pyarrow as pa
from PIL import Image, ImageDraw

from corpus.provenance import make_provenance
from corpus.schemas import PAIRS
from corpus.writer import write_dataset

COLORS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (30, 70, 220), "yellow": (240, 210, 20),
          "purple": (140, 40, 170), "orange": (245, 130, 20), "black": (20, 20, 20), "white": (250, 250, 250)}
SHAPES = ("circle", "square", "triangle", "cross")
BACKS = {"gray": (128, 128, 128), "light blue": (190, 220, 250), "beige": (235, 225, 200)}


def draw_pair(rng: np.random.Generator, size: int = 96) -> tuple[bytes, str]:
    color = list(COLORS)[int(rng.integers(len(COLORS)))]
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    back = list(BACKS)[int(rng.integers(len(BACKS)))]
    big = bool(rng.integers(2))
    side = ("left", "right")[int(rng.integers(2))]
    im = Image.new("RGB", (size, size), BACKS[back])
    d = ImageDraw.Draw(im)
    r = size * (0.3 if big else 0.16)
    cx = size * (0.3 if side == "left" else 0.7) + rng.uniform(-3, 3)
    cy = size * 0.5 + rng.uniform(-size * 0.15, size * 0.15)
    box = (cx - r, cy - r, cx + r, cy + r)
    c = COLORS[color]
    if shape == "circle":
        d.ellipse(box, fill=c)
    elif shape == "square":
        d.rectangle(box, fill=c)
    elif shape == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=c)
    else:
        w = r / 3
        d.rectangle((cx - r, cy - w, cx + r, cy + w), fill=c)
        d.rectangle((cx - w, cy - r, cx + w, cy + r), fill=c)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    text = f"a {'large' if big else 'small'} {color} {shape} on the {side} of a {back} background"
    return buf.getvalue(), text


def toy_pairs_table(n: int, seed: int = 0, size: int = 96):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        blob, text = draw_pair(rng, size)
        sha = hashlib.sha256(blob).hexdigest()
        rows.append({"id": f"toy-{seed}-{i:06d}", "image": blob, "mime": "image/png", "width": size, "height": size,
                     "sha256": sha, "phash": None, "text": text, "text_source": "synthetic:shapes:0",
                     "page_url": None, "language": "en", "clip_score": None, "drop_reason": None, "qa": [],
                     "meta_json": None})
    return pa.Table.from_pylist(rows, schema=PAIRS)


def write_toy_pairs(out_dir: str, n: int, seed: int = 0, size: int = 96, overwrite: bool = False) -> str:
    prov = make_provenance("pairs", {"toy_shapes": n, "seed": seed, "size": size}, [])
    write_dataset(out_dir, "pairs", toy_pairs_table(n, seed, size), prov, overwrite=overwrite)
    return out_dir
