"""Image fetching through the crawl rules, CLIP checkpoints (ours and foreign, weights-only),
training metrics, and the train-clip command."""
from __future__ import annotations

import functools
import http.server
import io
import json
import math
import os
import pickle
import threading

import pytest
from PIL import Image

from corpus.errors import ConfigError
from crawl.image_fetch import ImageFetchConfig, ImageFetcher


def _serve(root):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def test_fetch_obeys_robots_optout_and_private_addresses(tmp_path):
    for d in ("ok", "private", "notrain"):
        (tmp_path / d).mkdir()
        buf = io.BytesIO()
        Image.new("RGB", (64, 64), (1, 2, 3)).save(buf, format="PNG")
        (tmp_path / d / "a.png").write_bytes(buf.getvalue())
    (tmp_path / "robots.txt").write_text("User-agent: CiderBot\nDisallow: /private/\n\n"
                                         "User-agent: CiderBot-Extended\nDisallow: /notrain/\n")
    srv, base = _serve(str(tmp_path))
    try:
        f = ImageFetcher(ImageFetchConfig(allow_private=True, delay=0.0))
        ok = f.fetch(f"{base}/ok/a.png")
        assert ok.reason is None and ok.body[:4] == b"\x89PNG" and ok.training_allowed
        assert f.fetch(f"{base}/private/a.png").reason == "fetch_robots"
        nt = f.fetch(f"{base}/notrain/a.png")
        assert nt.reason is None and nt.training_allowed is False
        assert f.fetch(f"{base}/ok/missing.png").reason == "fetch_http_404"
        assert f.fetch("data:image/png;base64,AAAA").reason == "fetch_bad_scheme"
        f.close()
        strict = ImageFetcher(ImageFetchConfig(allow_private=False, delay=0.0))
        assert strict.fetch(f"{base}/ok/a.png").reason == "fetch_private_address"
        strict.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_tiny_clip_learns_and_reports_metrics(tiny_clip):
    path, result = tiny_clip
    before, after = result["before"], result["after"]
    assert after["roc_auc_matched_vs_shuffled"] > max(0.85, before["roc_auc_matched_vs_shuffled"] + 0.2)
    assert after["i2t_recall@5"] > before["i2t_recall@5"]
    assert result["loss_last"] < result["loss_first"]
    assert os.path.getsize(path) < 20e6
    meta = json.load(open(path + ".metrics.json"))
    assert meta["after"]["n"] == result["heldout_pairs"] > 20


def test_clip_scorer_ranks_matching_text_higher(tiny_clip):
    from filters.clip_score import ClipScorer
    from training.clip.toy_pairs import draw_pair
    import numpy as np

    scorer = ClipScorer(None, tiny_clip[0], batch_size=4, threads=1)
    rng = np.random.default_rng(123)
    pairs = [draw_pair(rng, 96) for _ in range(8)]
    imgs = [p[0] for p in pairs]
    matched = scorer.score(imgs, [p[1] for p in pairs])
    shifted = scorer.score(imgs, [pairs[(i + 1) % 8][1] for i in range(8)])
    assert sum(m > s for m, s in zip(matched, shifted)) >= 6
    bad = scorer.score([b"not an image", imgs[0]], ["x", pairs[0][1]])
    assert math.isnan(bad[0]) and bad[1] == pytest.approx(matched[0], abs=1e-4)


def test_foreign_checkpoints_load_weights_only(tmp_path, tiny_clip):
    import torch

    from training.clip.model import build, load_clip

    model, _, _ = build("cidermill-tiny-clip")
    pt = tmp_path / "plain.pt"
    torch.save({"state_dict": model.state_dict()}, pt)        # the open_clip training-run layout
    assert load_clip("cidermill-tiny-clip", str(pt))[3] == "cidermill-tiny-clip"
    with pytest.raises(ConfigError, match="not a cidermill checkpoint"):
        load_clip(None, str(pt))
    with pytest.raises(ConfigError, match="does not fit"):
        load_clip("RN50", str(pt))
    with pytest.raises(ConfigError, match="holds a 'cidermill-tiny-clip' model"):
        load_clip("ViT-B-32", tiny_clip[0])

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(ConfigError):
        load_clip("cidermill-tiny-clip", str(evil))
    assert not (tmp_path / "pwned").exists()
    with pytest.raises(ConfigError, match="not found"):
        load_clip(None, str(tmp_path / "nope.safetensors"))


def test_train_clip_command(tmp_path, capsys):
    from pipelines.cli import main

    out = str(tmp_path / "c.safetensors")
    rc = main(["train-clip", "--toy", "160", "--steps", "6", "--batch-size", "16", "--out", out, "--threads", "1"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "i2t_recall@1" in text and "roc_auc_matched_vs_shuffled" in text and os.path.exists(out)
    assert main(["train-clip", "--toy", "10", "--out", str(tmp_path / "x.bin")]) == 1
    assert main(["train-clip", "--pairs", str(tmp_path / "none"), "--out", out]) == 1


def test_default_checkpoint_is_trained_once_and_cached(tmp_path, monkeypatch):
    from pipelines.commands.images import synth_caption_pairs
    from training.clip.default_checkpoint import default_clip_checkpoint
    from training.clip.model import checkpoint_threshold, read_metadata

    monkeypatch.setenv("CIDERMILL_CACHE", str(tmp_path / "cache"))
    logs = []
    path = default_clip_checkpoint(synth_caption_pairs, n=160, steps=30, log=logs.append)  # enough to learn
    assert path.startswith(str(tmp_path / "cache")) and os.path.isfile(path)
    assert read_metadata(path)["model_name"] == "cidermill-tiny-clip"
    assert checkpoint_threshold(path) is not None and os.path.exists(path + ".metrics.json")
    mtime = os.path.getmtime(path)
    assert default_clip_checkpoint(synth_caption_pairs, n=160, steps=30, log=logs.append) == path and os.path.getmtime(path) == mtime
    assert sum("training the default CLIP scorer" in m for m in logs) == 1
    # a cached scorer whose metrics say it never learned (NaN, as a diverged run once cached) is retrained
    import json
    with open(path + ".metrics.json") as f:
        m = json.load(f)
    m["after"]["roc_auc_matched_vs_shuffled"] = float("nan")
    with open(path + ".metrics.json", "w") as f:
        json.dump(m, f)
    assert default_clip_checkpoint(synth_caption_pairs, n=160, steps=30, log=logs.append) == path
    assert sum("training the default CLIP scorer" in m for m in logs) == 2
    with open(path + ".metrics.json") as f:
        assert json.load(f)["after"]["roc_auc_matched_vs_shuffled"] > 0.6


def test_diverging_clip_training_is_an_error_not_a_nan_checkpoint(tmp_path):
    """A step with a non-finite loss or gradient is skipped (clipping an infinite gradient norm made
    every weight NaN); when most steps diverge the run stops with an error and writes nothing,
    instead of a checkpoint that scores every pair NaN."""
    from corpus.errors import CidermillError
    from training.clip.toy_pairs import write_toy_pairs
    from training.clip.train import train_clip

    write_toy_pairs(str(tmp_path / "p"), 80, seed=0, overwrite=True)
    out = str(tmp_path / "c.safetensors")
    with pytest.raises(CidermillError, match="diverged"):
        train_clip(str(tmp_path / "p"), out, steps=12, lr=1e4, batch_size=32, warmup=1, log=None)
    assert not os.path.exists(out) and not os.path.exists(out + ".metrics.json")
