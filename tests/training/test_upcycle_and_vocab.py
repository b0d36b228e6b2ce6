"""Sparse upcycling equals the dense model at start and then trains; vocabulary growth keeps old logits."""
import subprocess
import sys

import numpy as np
import pyarrow as pa
import torch

from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from training import checkpoint as ck
from training.models import build_model, get_preset
from training.tokenizer import extend_tokenizer, train_tokenizer
from training.train_config import parse_config
from training.trainer import Trainer, read_log
from training.upcycle import upcycle_model
from training.vocab_extension import grow_model_vocab
import dataclasses


def _dense(vocab=256):
    torch.manual_seed(0)
    return build_model(dataclasses.replace(get_preset("tiny"), vocab_size=vocab, max_seq_len=64, kernels="reference"))


def test_upcycled_equals_dense_then_trains(tmp_path):
    dense = _dense().eval()
    moe = upcycle_model(dense, n_experts=4, every=2, top_k=2).eval()
    assert moe.config.moe_every == 2 and moe.config.n_experts == 4
    assert moe.num_parameters() > dense.num_parameters()
    ids = torch.randint(0, 256, (2, 40))
    with torch.no_grad():
        a, b = dense(ids).logits, moe(ids).logits
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # through the CLI, then train from the upcycled checkpoint
    ck.save_model_weights(dense, str(tmp_path / "dense"))
    r = subprocess.run([sys.executable, "-m", "pipelines.cli", "upcycle", "--dense", str(tmp_path / "dense"),
                        "--experts", "4", "--every", "2", "--out", str(tmp_path / "moe")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [{"doc_id": f"d{i}", "tokens": [(i + 3 * k) % 200 + 2 for k in range(60)] + [1], "source": "s",
             "mixture": "s"} for i in range(200)]
    write_dataset(str(tmp_path / "tok"), "tokens", pa.Table.from_pylist(rows, schema=TOKENS))
    cfg = parse_config({"model": {"init_from": str(tmp_path / "moe")},
                        "data": {"seq_len": 32, "batch_size": 4, "mixture": [{"name": "s", "path": str(tmp_path / "tok")}]},
                        "optim": {"lr": 3e-3}, "schedule": {"warmup_steps": 2},
                        "train": {"steps": 16, "out": str(tmp_path / "run"), "eval_every": 0, "ckpt_every": 0}})
    Trainer(cfg).run()
    log = read_log(str(tmp_path / "run"))
    assert np.mean([r["loss"] for r in log[-4:]]) < log[0]["loss"] - 0.3
    assert all(r["aux_loss"] > 0 for r in log)


def test_vocab_growth_keeps_old_logits():
    en = [f"the crawler fetched page {i} and kept its text for training" for i in range(300)]
    ja = [f"クローラーはページ{i}を取得し、訓練用にテキストを保存しました" for i in range(300)]
    base = train_tokenizer(en, 400)
    ext, new = extend_tokenizer(base, ja, 40)
    model = _dense(vocab=base.get_vocab_size()).eval()
    ids = torch.tensor([base.encode(en[7]).ids])
    with torch.no_grad():
        before = model(ids).logits
        grow_model_vocab(model, base, new)
        after = model(ids).logits
    assert model.config.vocab_size == ext.get_vocab_size()
    torch.testing.assert_close(after[..., :base.get_vocab_size()], before, rtol=0, atol=1e-6)
    emb = model.tok_embeddings.weight
    piece_ids = [t.id for t in base.model.tokenize(new[0])]
    torch.testing.assert_close(emb[base.get_vocab_size()], emb[piece_ids].mean(0))
