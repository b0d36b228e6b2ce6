"""Multimodal loader (bad images, drop reasons, resume) and staged vision training through the CLI."""
import io
import json

import numpy as np
import pytest
import torch
from PIL import Image

from pipelines.cli import main
import vision_data
from training.tokenizer import load_tokenizer
from training.vision.data import build_vision_data
from training.vision.loader import MultimodalLoader
from training.vision.run_config import parse_vision
from training.vision.samples import SampleBuilder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return vision_data.build(str(tmp_path_factory.mktemp("vision")), scenes=30, charts=4)


def _png(mode, size, color):
    buf = io.BytesIO()
    Image.new(mode, size, color).save(buf, format="PNG" if mode != "CMYK" else "JPEG")
    return buf.getvalue()


def _bad_rows(good):
    """Rows with every kind of awkward image, built from a real scene row (its text and QA)."""
    variants = {
        "corrupt": good["image"][:60],
        "gray": _png("L", (50, 90), 128),
        "cmyk": _png("CMYK", (120, 40), (10, 200, 30, 0)),
        "alpha": _png("RGBA", (64, 64), (255, 0, 0, 100)),
        "tiny": _png("RGB", (4, 300), (0, 0, 0)),
        "aspect": _png("RGB", (900, 20), (0, 0, 0)),
        "huge": _png("1", (8000, 6000), 0),
        "i16": _png("I;16", (40, 40), 300),
    }
    return [dict(good, id=f"bad-{k}", image=v, sha256=f"sha-{k}") for k, v in variants.items()]


def test_bad_images_dropped_with_reasons_never_crash(data, tmp_path):
    from corpus.reader import ShardDataset
    from corpus.schemas import INTERLEAVED
    from corpus.writer import write_dataset
    import pyarrow as pa
    good = next(ShardDataset(data["scenes"]).iter_rows())
    pairs = vision_data.write_pairs(str(tmp_path / "bad"), _bad_rows(good))
    docs = [{"id": "doc-ok", "url": "u", "language": "en", "items": [
                {"type": "text", "text": "A picture:"}, {"type": "image", "image_sha256": "sha-gray"},
                {"type": "text", "text": "and more text."}]},
            {"id": "doc-missing", "url": "u", "language": "en", "items": [
                {"type": "text", "text": "Two pictures:"}, {"type": "image", "image_sha256": "sha-gray"},
                {"type": "image", "image_sha256": "not-in-the-store"}]},
            {"id": "doc-corrupt", "url": "u", "language": "en", "items": [
                {"type": "image", "image_sha256": "sha-corrupt"}, {"type": "text", "text": "x"}]}]
    inter = str(tmp_path / "inter")
    write_dataset(inter, "interleaved", pa.Table.from_pylist(docs, schema=INTERLEAVED))
    v = parse_vision({"pairs": [{"name": "bad", "path": pairs}],
                      "interleaved": [{"name": "docs", "path": inter, "images": [pairs]}],
                      "heldout": 0.001, "stages": [{"name": "align", "steps": 1}]})
    tok = load_tokenizer(data["tokenizer"])
    b = SampleBuilder(tok, placeholder=tok.get_vocab_size() + 5, n_image_tokens=4, image_size=96, seq_len=48)
    vd = build_vision_data(v, b)
    rep = vd.report
    assert rep["dropped"] == {"image_corrupt": 2, "image_too_small": 1, "image_extreme_aspect": 1,
                              "image_too_large": 1, "placeholders_exceed_images": 1}
    assert rep["converted_to_rgb"] == {"CMYK": 1, "I;16": 1, "L": 3, "RGBA": 1}   # gray: 1 row + 2 docs
    assert rep["examples"]["placeholders_exceed_images"] == "docs:doc-missing"
    names = [n for n, _, _ in vd.sources]
    assert names == ["bad", "docs"] and len(vd.sources[1][1]) == 1          # doc-ok survives
    doc = vd.sources[1][1].samples[0]
    assert (doc.ids == b.ph).sum() == 4 and len(doc.images) == 1
    for s in vd.sources[0][1].samples:                                     # every kept image is 3x96x96
        assert all(im.shape == (3, 96, 96) and np.isfinite(im).all() for im in s.images)


def test_loader_resumes_exactly_and_masks_padding(data):
    v = parse_vision({"pairs": [{"name": "scenes", "path": data["scenes"]}], "stages": [{"name": "align", "steps": 1}]})
    tok = load_tokenizer(data["tokenizer"])
    b = SampleBuilder(tok, placeholder=tok.get_vocab_size(), n_image_tokens=4, image_size=96, seq_len=48)
    src = build_vision_data(v, b).sources
    from training.data.token_source import TokenSource
    mix = [("text", TokenSource(data["tokens"]), 1.0)] + src

    def make():
        return MultimodalLoader(mix, 48, 3, eos=b.eos, seed=5)

    a = make()
    for _ in range(4):
        a.next_batch()
    state = json.loads(json.dumps(a.state_dict()))
    want = [a.next_batch() for _ in range(3)]
    r = make()
    r.load_state_dict(state)
    for w in want:
        g = r.next_batch()
        for k in ("input_ids", "targets", "doc_ids"):
            assert (g[k] == w[k]).all()
        assert (w["images"] is None) == (g["images"] is None)
        if w["images"] is not None:
            assert (g["images"] == w["images"]).all()
            n_ph = int((w["input_ids"] == b.ph).sum())
            assert n_ph == 4 * w["images"].shape[0]
    assert {s for w in want for s in w["sources"]} == {"text", "scenes"}


def test_stages_resume_exactly_across_a_stage_switch(data, tmp_path, capsys):
    stages = [{"name": "text", "steps": 3}, {"name": "align", "steps": 2}, {"name": "adapt", "steps": 3}]

    def write(out):
        p = tmp_path / f"{out}.json"
        p.write_text(json.dumps(vision_data.train_config(data, str(tmp_path / out), stages)))
        return str(p)

    full = write("full")
    assert main(["train", "--config", full]) == 0
    part = write("part")
    assert main(["train", "--config", part, "--stop-after", "2"]) == 0     # stops inside stage 1
    assert main(["train", "--config", part]) == 0                           # resumes through 2 switches
    out = capsys.readouterr().out
    assert "resumed from step 2" in out and "stage adapt" in out

    def log(run):
        return [json.loads(l) for l in open(tmp_path / run / "log.jsonl")]

    ref, got = log("full"), log("part")
    assert [r["stage"] for r in ref] == ["text"] * 3 + ["align"] * 2 + ["adapt"] * 3
    assert [r["loss"] for r in got] == [r["loss"] for r in ref]
    assert [r.get("eval") for r in got] == [r.get("eval") for r in ref]
    assert sum(r["images"] for r in ref if r["stage"] == "text") == 0
    assert sum(r["images"] for r in ref if r["stage"] != "text") > 0
    ev = json.load(open(tmp_path / "full" / "vision_eval.json"))
    assert ev["text_loss_before_adapt"] is not None and ev["text_loss_after_adapt"] is not None
    assert [s["name"] for s in ev["stages"]] == ["text", "align", "adapt"]
    assert ev["stages"][-1]["qa_n"] > 0


def test_vision_config_errors_are_one_line(data, tmp_path, capsys):
    cfg = vision_data.train_config(data, str(tmp_path / "r"), [{"name": "nope", "steps": 1}])
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cfg))
    assert main(["train", "--config", str(p)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "vision.stages[0].name 'nope'" in err


def test_train_clip_with_vision_tower_round_trips(data, tmp_path, capsys):
    ck = str(tmp_path / "v.safetensors")
    assert main(["train-clip", "--pairs", data["scenes"], "--vision", "vitdet-tiny", "--out", ck, "--steps", "3",
                 "--batch-size", "8", "--heldout", "0.3", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    assert "vitdet-tiny image tower" in out and "i2t_recall@1" in out
    from training.clip.model import load_clip
    model, pre, _, _ = load_clip(checkpoint=ck)
    assert type(model.visual).__name__ == "EncoderTower"
    assert pre(Image.new("L", (30, 70))).shape == (3, 96, 96)          # letterbox policy, any mode
    # stage 1 -> stage 2: `vision.encoder_init` loads exactly this image tower into the VLM's encoder
    from corpus.errors import ConfigError
    from training.vision.config import get_vision_preset
    from training.vision.encoder import VisionEncoder
    from training.vision.stages import load_clip_encoder
    vcfg = get_vision_preset("vitdet-tiny")
    enc = VisionEncoder(vcfg)
    load_clip_encoder(ck, enc, vcfg)
    want = model.visual.encoder.state_dict()
    assert all(torch.equal(t, want[k]) for k, t in enc.state_dict().items())
    with pytest.raises(ConfigError, match="not this run's encoder"):
        other = get_vision_preset("vitdet-tiny", registers=0)
        load_clip_encoder(ck, VisionEncoder(other), other)


def test_model_info_vision_presets(capsys):
    assert main(["model", "info", "vitdet-l"]) == 0
    out = capsys.readouterr().out
    assert "304,203,776" in out and "1,088 in the encoder (1,024 patches + 64 registers)" in out
    assert main(["model", "info", "vit-g", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["params_total"] == 1_011_864_832 and info["tokens_per_image"] == 1024


def test_long_sample_is_cut_with_the_images_past_the_cut(data):
    tok = load_tokenizer(data["tokenizer"])
    b = SampleBuilder(tok, placeholder=tok.get_vocab_size(), n_image_tokens=4, image_size=96, seq_len=24)
    img = np.zeros((3, 96, 96), np.float32)
    long_text = "How many items are in the image? " * 3
    s = b.assemble([("text", "A picture:"), ("image", img), ("text", long_text), ("image", img), ("text", "end")],
                   "docs", "interleaved", "docs:long")
    assert len(s.ids) <= 25 and len(s.images) == 1
    assert int((s.ids[:-1] == b.ph).sum()) == 4 and b.ph not in s.ids[-1:]
    assert b.report.dropped["images_cut_by_seq_len"] == 1
    assert b.assemble([("image", img)] * 7, "docs", "interleaved", "docs:only-images") is None
    assert b.report.dropped["too_long"] == 1
