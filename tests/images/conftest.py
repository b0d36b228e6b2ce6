"""Fixtures for the images tests: a local image site served over 127.0.0.1, a pages dataset that
points at it, and a tiny CLIP checkpoint trained once per session on Pillow shape pairs."""
from __future__ import annotations

import functools
import http.server
import io
import os
import threading

import numpy as np
import pytest


def _png(im) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def _jpeg(im, q=90) -> bytes:
    buf = io.BytesIO()
    im.convert("RGB").save(buf, format="JPEG", quality=q)
    return buf.getvalue()


def build_site(root: str) -> dict[str, dict]:
    """Write image files under root; returns name -> {"alt", "caption", "expect"} (drop reason or None)."""
    from PIL import Image

    from training.clip.toy_pairs import draw_pair

    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(7)
    files: dict[str, bytes] = {}
    cases: dict[str, dict] = {}
    for i in range(6):   # good, aligned images
        blob, text = draw_pair(rng, 96)
        files[f"good{i}.png"] = blob
        cases[f"good{i}.png"] = {"alt": text, "caption": None, "expect": None}
    # exact duplicate (same bytes at another URL) and near duplicate (JPEG re-encode) of good0
    files["dup_exact.png"] = files["good0.png"]
    cases["dup_exact.png"] = {"alt": cases["good0.png"]["alt"], "caption": None, "expect": "duplicate_image_exact"}
    files["dup_near.jpg"] = _jpeg(Image.open(io.BytesIO(files["good1.png"])), 70)
    cases["dup_near.jpg"] = {"alt": cases["good1.png"]["alt"], "caption": None, "expect": "duplicate_image_near"}
    # junk alt texts on otherwise fine images
    for name, alt, why in (("junk_file.png", "IMG_2041.JPG", "alt_filename"), ("junk_empty.png", "", "alt_empty"),
                           ("junk_url.png", "https://cdn.example.com/a.png", "alt_url")):
        files[name] = draw_pair(rng, 96)[0]
        cases[name] = {"alt": alt, "caption": None, "expect": why}
    # a mismatched caption: the text names another picture entirely
    blob, _ = draw_pair(np.random.default_rng(99), 96)
    files["mismatch.png"] = blob
    cases["mismatch.png"] = {"alt": "a quarterly revenue table with twelve rows of numbers", "caption": None,
                             "expect": "clip_low_score"}
    # bad files
    good = files["good2.png"]
    frames = [Image.new("RGB", (80, 80), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    bad = {
        "zero.jpg": (b"", "image_empty"),
        "html.jpg": (b"<!DOCTYPE html><html><body>Not found</body></html>", "image_is_html"),
        "corrupt.jpg": (b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4, "image_corrupt"),
        "truncated.png": (good[: len(good) // 2], "image_truncated"),
        "tiny.png": (_png(Image.new("RGB", (8, 8), (9, 9, 9))), "image_too_small"),
        "strip.png": (_png(Image.new("RGB", (600, 40), (9, 90, 9))), "image_bad_aspect_ratio"),
        "vector.svg": (b'<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64"/>'
                       b'<!DOCTYPE x [<!ENTITY a "b">]></svg>', "image_corrupt"),
        "bomb.png": (_png(Image.new("1", (10000, 10000))), "image_too_many_pixels"),
    }
    for name, (blob, why) in bad.items():
        files[name] = blob
        cases[name] = {"alt": "a picture of a small garden with apple trees", "caption": None, "expect": why}
    files["anim.gif"] = buf.getvalue()
    cases["anim.gif"] = {"alt": "a large red circle on the left of a gray background", "caption": None,
                         "expect": "image_animated"}
    cases["missing.png"] = {"alt": "a small blue square on the right of a beige background", "caption": None,
                            "expect": "fetch_http_404"}
    # an alt text plus a figure caption on one image: two pairs
    blob, text = draw_pair(rng, 96)
    files["captioned.png"] = blob
    cases["captioned.png"] = {"alt": text, "caption": text.replace("a ", "A ", 1), "expect": None}
    for name, blob in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(blob)
    return cases


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):  # noqa: D401
        pass


@pytest.fixture(scope="session")
def image_site(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("imgsite"))
    cases = build_site(root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    yield base, cases, root
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory):
    """A cidermill-tiny-clip checkpoint trained briefly on shape pairs (the test site's domain)."""
    from training.clip.toy_pairs import write_toy_pairs
    from training.clip.train import train_clip

    d = tmp_path_factory.mktemp("clip")
    pairs = write_toy_pairs(str(d / "pairs"), 400, seed=1, size=64)
    out = str(d / "tiny.safetensors")
    result = train_clip(pairs, out, steps=60, seed=0, batch_size=32, lr=2e-3, warmup=6, heldout=0.15, log=None,
                        threads=1)   # one thread: oversubscribed OpenMP spins badly on a shared 2-core box
    return out, result
