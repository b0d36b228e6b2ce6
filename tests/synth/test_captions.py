"""Captioned scenes: boxes measured from the rendered pixels, caption levels, grounded tags, QA."""
import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from synth.captions import make_captioned_scene
from synth.scene_draw import COLORS


@pytest.fixture(scope="module")
def scenes():
    return [make_captioned_scene(21, i, 224, 224, max_items=5) for i in range(40)]


def measured_box(arr, colors, box, pad=3):
    """Bounding box of the pixels carrying one of `colors` in the window `box` grown by `pad`."""
    h, w, _ = arr.shape
    x0, y0, x1, y1 = max(0, box[0] - pad), max(0, box[1] - pad), min(w, box[2] + pad), min(h, box[3] + pad)
    win = arr[y0:y1, x0:x1]
    hit = np.zeros(win.shape[:2], bool)
    for c in colors:
        hit |= np.all(win == np.array(COLORS[c], np.uint8), axis=-1)
    ys, xs = np.nonzero(hit)
    assert len(xs), "no pixel of the item's colours near its box"
    return [int(xs.min()) + x0, int(ys.min()) + y0, int(xs.max()) + 1 + x0, int(ys.max()) + 1 + y0]


def test_boxes_match_drawn_pixels(scenes):
    checked = {"shape": 0, "object": 0, "text": 0, "chart": 0}
    for row in scenes:
        arr = np.asarray(Image.open(io.BytesIO(row["image"])).convert("RGB"))
        for it in json.loads(row["meta_json"])["scene"]["items"]:
            got = measured_box(arr, it["colors"], it["box_px"])
            assert got == it["box_px"], (it, got)  # exact: PIL draws shapes and (fontmode 1) text un-aliased
            checked[it["kind"]] += 1
    assert all(v > 0 for v in checked.values()), checked


def test_grounded_caption_boxes_are_normalised_item_boxes(scenes):
    for row in scenes:
        meta = json.loads(row["meta_json"])
        items, w, h = meta["scene"]["items"], meta["scene"]["width"], meta["scene"]["height"]
        tags = re.findall(r"<box>([0-9.]+),([0-9.]+),([0-9.]+),([0-9.]+)</box>", meta["captions"]["grounded"])
        assert len(tags) == len(items)
        for tag, it in zip(tags, items):
            px = it["box_px"]
            want = [px[0] / w, px[1] / h, px[2] / w, px[3] / h]
            assert all(abs(float(t) - x) <= 0.005 + 1e-9 for t, x in zip(tag, want)), (tag, want, it)
            assert 0 <= float(tag[0]) < float(tag[2]) <= 1 and 0 <= float(tag[1]) < float(tag[3]) <= 1


def test_caption_levels_and_vocabulary(scenes):
    words = set()
    for row in scenes:
        caps = json.loads(row["meta_json"])["captions"]
        assert set(caps) == {"keywords", "sentence", "paragraph", "grounded"}
        assert row["text"] == caps["sentence"] and row["text_source"] == "synthetic:caption:sentence"
        assert len(caps["paragraph"]) > len(caps["sentence"]) > len(caps["keywords"]) / 2
        assert "<box>" not in caps["sentence"]
        words |= set(re.findall(r"[a-z]+", caps["sentence"].lower()))
    assert len(words & set(COLORS)) >= 8  # colour words a small CLIP can align with
    assert len(words) >= 60


def test_scene_qa_rederived(scenes):
    for row in scenes:
        meta = json.loads(row["meta_json"])
        items = meta["scene"]["items"]
        for qa, a in zip(row["qa"], meta["qa_args"]):
            if a["op"] == "count_items":
                want = str(len(items))
            elif a["op"] == "count_shape":
                want = str(sum(1 for it in items if it["kind"] == "shape" and it["shape"] == a["shape"]))
            elif a["op"] == "color_of":
                [it] = [it for it in items if it["kind"] == "shape" and it["shape"] == a["shape"]]
                want = it["color"]
            elif a["op"] == "exists":
                want = "yes" if any(it.get("shape") == a["shape"] and it["color"] == a["color"] for it in items) else "no"
            else:
                it = items[a["item"]]
                cx, cy = it["center"]
                hword = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
                vword = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
                want = {("", ""): "in the center"}.get((hword, vword)) or (
                    f"on the {hword}" if not vword else f"at the {vword}" if not hword else f"in the {vword} {hword}")
            assert qa["answer"] == want, (qa, a)


def test_deterministic_and_seed_sensitive():
    a, b = make_captioned_scene(5, 9), make_captioned_scene(5, 9)
    assert a == b
    assert make_captioned_scene(6, 9)["image"] != a["image"]
