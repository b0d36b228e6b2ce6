"""`cidermill train`: exact resume, clear config/data/checkpoint errors, NaN stop, distillation."""
import json
import os

import numpy as np
import pyarrow as pa
import pytest
import yaml

from corpus.errors import CidermillError, ConfigError
from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from training.train_config import load_config, parse_config
from training.trainer import Trainer, read_log


@pytest.fixture(scope="module")
def tokens(tmp_path_factory):
    """A learnable token stream: documents follow a fixed pattern with noise."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(400):
        start = int(rng.integers(0, 50))
        n = int(rng.integers(20, 120))
        toks = [(start + 3 * k) % 200 + 2 for k in range(n)] + [1]
        rows.append({"doc_id": f"d{i}", "tokens": toks, "source": "syn", "mixture": "syn"})
    d = str(tmp_path_factory.mktemp("tok") / "tokens")
    write_dataset(d, "tokens", pa.Table.from_pylist(rows, schema=TOKENS), target_bytes=20000)
    return d


def _cfg(tokens, out, preset="tiny", steps=12, **train):
    raw = {"model": {"preset": preset, "overrides": {"vocab_size": 256, "max_seq_len": 64}},
           "data": {"seq_len": 32, "batch_size": 4, "mixture": [{"name": "syn", "path": tokens, "weight": 1.0}],
                    "eval": {"holdout_permille": 100}},
           "optim": {"lr": 3e-3}, "schedule": {"warmup_steps": 3, "decay": "cosine"},
           "train": {"steps": steps, "out": str(out), "log_every": 2, "eval_every": 6, "eval_batches": 1,
                     "ckpt_every": 4, **train}}
    return parse_config(raw)


def test_resume_reproduces_uninterrupted_losses(tokens, tmp_path):
    full = Trainer(_cfg(tokens, tmp_path / "full")).run()
    assert full["steps"] == 12
    ref = [r["loss"] for r in read_log(str(tmp_path / "full"))]
    part = tmp_path / "part"
    Trainer(_cfg(tokens, part), stop_after=5).run()   # checkpoint at 4, log up to 5
    res = Trainer(_cfg(tokens, part)).run()             # resumes from step 4
    assert res["resumed_from"] == 4
    got = [r["loss"] for r in read_log(str(part))]
    assert got == ref                                    # bit-exact on CPU
    assert ref[-1] < ref[0]
    assert os.path.exists(part / "_report" / "plots" / "loss.png")
    assert any("eval_loss" in r for r in read_log(str(part)))


def test_ptmoe_trains_and_logs_aux_loss(tokens, tmp_path):
    Trainer(_cfg(tokens, tmp_path / "pt", preset="ptmoe-tiny", steps=6)).run()
    rows = read_log(str(tmp_path / "pt"))
    assert len(rows) == 6 and all(r["aux_loss"] > 0 for r in rows)


def test_config_errors_name_the_key(tokens, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"model": "tiny", "data": {"mixture": [{"name": "a", "path": tokens}]},
                                 "train": {"stepz": 3}}))
    with pytest.raises(ConfigError, match="train.stepz"):
        load_config(str(p))
    p.write_text(yaml.safe_dump({"model": "tiny", "data": {"mixture": [{"name": "a", "path": tokens}]},
                                 "optim": {"lr": -1}}))
    with pytest.raises(ConfigError, match="optim.lr"):
        load_config(str(p))
    p.write_text("model: [unclosed")
    with pytest.raises(ConfigError, match="unreadable config"):
        load_config(str(p))
    with pytest.raises(ConfigError, match="model.overrides.n_layerz"):
        Trainer(parse_config({"model": {"preset": "tiny", "overrides": {"n_layerz": 2}},
                              "data": {"mixture": [{"name": "a", "path": tokens}]}})).run()


def test_refuses_other_architecture_checkpoint(tokens, tmp_path):
    Trainer(_cfg(tokens, tmp_path / "run", steps=4)).run()
    with pytest.raises(CidermillError, match="different model"):
        Trainer(_cfg(tokens, tmp_path / "run", preset="ptmoe-tiny", steps=8)).run()


def test_nan_stops_with_message(tokens, tmp_path):
    cfg = _cfg(tokens, tmp_path / "nan", steps=5)
    cfg.optim.lr = 1e30
    cfg.optim.grad_clip = 0.0
    with pytest.raises(CidermillError, match="not finite"):
        Trainer(cfg).run()


def test_distillation_from_teacher(tokens, tmp_path):
    Trainer(_cfg(tokens, tmp_path / "teacher", steps=8)).run()
    teacher = tmp_path / "teacher" / "checkpoints"
    ck = teacher / open(teacher / "latest").read().strip()
    for top_k in (0, 8):
        cfg = _cfg(tokens, tmp_path / f"student{top_k}", steps=4)
        cfg.distill.teacher, cfg.distill.top_k, cfg.distill.alpha = str(ck), top_k, 0.7
        Trainer(cfg).run()
        rows = read_log(str(tmp_path / f"student{top_k}"))
        assert all(np.isfinite(r["kl"]) and r["kl"] >= 0 for r in rows)
    data = json.load(open(tmp_path / "student0" / "config.json"))
    assert data["train"]["distill"]["teacher"] == str(ck)
