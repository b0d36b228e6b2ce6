"""`cidermill compress ...` and `cidermill model info --checkpoint` on a tiny checkpoint and a small
token dataset (real files, real peft, real astcenc lookup)."""
import dataclasses

import numpy as np
import pyarrow as pa
import pytest
import torch

from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from pipelines.cli import main
from training.checkpoint import save_model_weights
from training.models import build_model, get_preset
from training.quant import packed


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compress")
    torch.manual_seed(0)
    save_model_weights(build_model(dataclasses.replace(get_preset("tiny"), kernels="reference")),
                       str(root / "ckpt"))
    rng = np.random.default_rng(0)
    rows = [{"doc_id": f"d{i}", "tokens": rng.integers(0, 4096, 120).astype(np.uint32).tolist(),
             "source": "t", "mixture": "t"} for i in range(80)]
    write_dataset(str(root / "tok"), "tokens", pa.Table.from_pylist(rows, schema=TOKENS))
    return root


def test_qat_export_info_lora(inputs, capsys):
    r = inputs
    small = ["--data", str(r / "tok"), "--batch", "2", "--seq", "32", "--eval-permille", "100"]
    assert main(["compress", "qat", "--checkpoint", str(r / "ckpt"), "--out", str(r / "q"), "--steps", "2",
                 "--embed-bits", "4", *small]) == 0
    assert "after QAT" in capsys.readouterr().out
    assert main(["compress", "export", "--qat", str(r / "q"), "--out", str(r / "re.packed")]) == 0
    a, _ = packed.load_packed(str(r / "q" / "model.packed"))
    b, _ = packed.load_packed(str(r / "re.packed"))
    ids = torch.randint(0, 4096, (1, 9))
    with torch.no_grad():
        assert torch.equal(a(ids).logits, b(ids).logits)
    capsys.readouterr()
    assert main(["model", "info", "--checkpoint", str(r / "re.packed")]) == 0
    out = capsys.readouterr().out
    assert "2.125 bits/weight" in out and "4.500 bits/weight" in out and "B/token int8" in out
    assert main(["compress", "lora", "--packed", str(r / "re.packed"), "--out", str(r / "ad"), "--steps", "2",
                 "--rank", "4", *small]) == 0
    assert (r / "ad" / "cidermill_base.json").exists()


def test_refusals_are_one_line(inputs, capsys, monkeypatch):
    r = inputs
    assert main(["compress", "ptq", "--checkpoint", str(r / "ckpt"), "--method", "gptq",
                 "--out", str(r / "g.packed")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs --data" in err
    assert main(["compress", "qat", "--checkpoint", str(r / "ckpt"), "--data", str(r / "tok"),
                 "--out", str(r / "x"), "--targets", "attn.wq,experts.w_gate"]) == 1
    assert "does not have: experts.w_gate" in capsys.readouterr().err
    monkeypatch.setenv("PATH", "")
    assert main(["compress", "astc", "--checkpoint", str(r / "ckpt"), "--out", str(r / "astc")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "astcenc not found" in err
