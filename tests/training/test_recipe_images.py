"""A recipe whose middle stage adds image data (the vision stages) through `cidermill train --recipe`:
the image stage starts from the text stage's LM and the next stage starts from the image stage's LM."""
import json

import pytest
import torch
import yaml
from safetensors.torch import load_file

import vision_data
from pipelines.cli import main
from training import checkpoint as ck

pytestmark = pytest.mark.slow


def test_text_image_text_recipe_hands_the_lm_on(tmp_path, capsys):
    d = vision_data.build(str(tmp_path / "data"), scenes=16, charts=2)
    vision = vision_data.train_config(d, "unused", [{"name": "align", "steps": 2},
                                                    {"name": "adapt", "steps": 2}])["vision"]
    recipe = {"name": "img", "sources": {"text": d["tokens"]},
              "model": {"preset": "tiny", "overrides": {"vocab_size": "auto", "d_model": 64, "n_layers": 2,
                                                        "ffn_hidden": 128}},
              "data": {"batch_size": 4, "tokenizer": d["tokenizer"], "eval": {"holdout_permille": 100}},
              "train": {"seed": 0, "eval_every": 0, "ckpt_every": 2},
              "stages": [{"name": "text", "mixture": {"text": 1.0}, "seq_len": 48, "tokens": 2 * 48 * 4},
                         {"name": "image", "mixture": {"text": 1.0}, "seq_len": 48, "vision": vision},
                         {"name": "long", "mixture": {"text": 1.0}, "seq_len": 64, "rope_theta": 40000,
                          "tokens": 2 * 64 * 4}]}
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump(recipe))
    assert main(["train", "--recipe", str(p), "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "stage image" in out and "n/a (image stage)" in out and "finished" in out
    rep = json.load(open(tmp_path / "run" / "recipe_report.json"))
    assert [s["name"] for s in rep["stages"]] == ["text", "image", "long"] and rep["finished"]
    lm = tmp_path / "run" / "stages" / "01-image" / "lm"
    image_ckpt = ck.latest_checkpoint(str(tmp_path / "run" / "stages" / "01-image"))
    stack = load_file(f"{image_ckpt}/{ck.MODEL_FILE}")
    exported = load_file(f"{lm}/{ck.MODEL_FILE}")
    assert exported and all(torch.equal(v, stack["lm." + k]) for k, v in exported.items())
    text_lm = load_file(f"{ck.latest_checkpoint(str(tmp_path / 'run' / 'stages' / '00-text'))}/{ck.MODEL_FILE}")
    assert not torch.equal(text_lm["layers.0.attn.wq.weight"], exported["layers.0.attn.wq.weight"])
    cfg = json.load(open(tmp_path / "run" / "stages" / "02-long" / "config.json"))
    assert cfg["train"]["model"]["init_from"] == str(lm) and cfg["model"]["rope_theta"] == 40000.0
