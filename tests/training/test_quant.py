"""training/quant: STE and clip gradients, grid levels, exact packed round trip, refusals, GPTQ,
LoRA adapters, ASTC, the int8 KV cache path."""
import dataclasses
import json
import os
import struct

import pytest
import torch

from corpus.errors import CidermillError
from training.models import build_model, get_preset
from training.quant import evaluate, fake_quant, grid, lora, packed, ptq
from training.quant.fake_quant import QuantConfig


def _tiny(seed=0):
    torch.manual_seed(seed)
    return build_model(dataclasses.replace(get_preset("tiny"), kernels="reference"))


def _ids(b=2, t=12, seed=0):
    return torch.randint(0, 4096, (b, t), generator=torch.Generator().manual_seed(seed))


def test_ste_gradients_and_clip_gradients():
    w = torch.randn(6, 8, generator=torch.Generator().manual_seed(0)).requires_grad_()
    clip = torch.full((6, 1), 0.5, requires_grad=True)
    q = grid.fake_quantize(w, clip, 2, 8)
    q.sum().backward()
    step = grid.step_of(w, clip.detach(), 2, 8)
    inside = (w.detach() / step.repeat_interleave(8, 1)).abs() <= 1.5
    assert inside.any() and (~inside).any()  # clip 0.5 clips the largest weights of each row
    assert torch.equal(w.grad, inside.float())  # straight through inside, zero where clipped
    assert clip.grad.abs().min() > 0  # every row's clip gets a gradient


def test_at_most_four_levels_per_group_and_sixteen_at_4_bits():
    w = torch.randn(16, 64, generator=torch.Generator().manual_seed(1))
    for bits, group, most in ((2, 32, 4), (4, 16, 16)):
        q = grid.fake_quantize(w, grid.mse_clip(w, bits, group), bits, group)
        for g in grid.grouped(q, group).reshape(-1, group):
            assert len(torch.unique(g)) <= most
        qw = grid.quantize(w, 1.0, bits, group)
        assert int(qw.codes.max()) < 2 ** bits
        assert torch.equal(qw.dequantize(), grid.fake_quantize(w, 1.0, bits, group))


def test_mse_init_beats_max_scaling():
    w = torch.randn(32, 128, generator=torch.Generator().manual_seed(2))
    clip = grid.mse_clip(w, 2, 128)
    err_mse = (grid.fake_quantize(w, clip, 2, 128) - w).pow(2).sum()
    err_max = (grid.fake_quantize(w, 1.0, 2, 128) - w).pow(2).sum()
    assert err_mse < 0.8 * err_max and clip.max() < 1.0


def test_qat_model_trains_clips_and_refuses_missing_layers():
    m = fake_quant.prepare_qat(_tiny(), QuantConfig(embed_bits=4))
    out = m(_ids(), targets=_ids(seed=1))
    out.loss.backward()
    fqs = [mod.parametrizations.weight[0] for mod in fake_quant.quantized_modules(m).values()]
    assert len(fqs) == 4 * 7 + 1
    assert all(fq.clip.grad is not None and fq.clip.grad.abs().sum() > 0 for fq in fqs)
    with pytest.raises(CidermillError, match="does not have: experts.w_gate"):
        fake_quant.prepare_qat(_tiny(), QuantConfig(targets=("attn.wq", "experts.w_gate")))


@pytest.fixture(scope="module")
def qat_file(tmp_path_factory):
    m = fake_quant.prepare_qat(_tiny(), QuantConfig(embed_bits=4))
    qc = m.quant_config
    # a few steps so weights and clips have moved away from their initial values
    from training.quant import qat
    data = torch.randint(0, 4096, (5000,)).numpy()
    from training.quant.data import batches
    qat.fit(m, batches(data, 2, 16), 3)
    path = str(tmp_path_factory.mktemp("packed") / "m.packed")
    qw, sd = fake_quant.freeze(m), fake_quant.plain_state_dict(m)
    packed.save_packed(path, m.config.to_dict(), qw, {k: v for k, v in sd.items() if k not in qw}, qc.to_dict())
    return m, path


def test_packed_round_trip_reproduces_fake_quant_logits_exactly(qat_file):
    m, path = qat_file
    loaded, header = packed.load_packed(path)
    ids = _ids(2, 20)
    with torch.no_grad():
        assert torch.equal(loaded(ids).logits, m(ids).logits)
    rep = packed.size_report(path)
    assert rep["kinds"]["linear"]["bits_per_weight"] == 2 + 16 / 128  # codes four a byte + fp16 step
    assert rep["kinds"]["embedding"]["bits_per_weight"] == 4 + 16 / 32
    assert rep["file_bytes"] == os.path.getsize(path)


def test_pack_unpack_round_trip():
    codes = torch.randint(0, 4, (3, 16), dtype=torch.uint8)
    p = packed.pack(codes, 2)
    assert p.shape == (3, 4) and torch.equal(packed.unpack(p, 2), codes)
    assert int(p[0, 0]) == sum(int(codes[0, j]) << (2 * j) for j in range(4))  # first weight lowest
    c4 = torch.randint(0, 16, (2, 6), dtype=torch.uint8)
    assert torch.equal(packed.unpack(packed.pack(c4, 4), 4), c4)


def _rewrite_header(src, dst, edit):
    with open(src, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        body = f.read()
    meta = json.loads(hdr["__metadata__"][packed.META_KEY])
    edit(meta, hdr)
    hdr["__metadata__"][packed.META_KEY] = json.dumps(meta)
    raw = json.dumps(hdr).encode()
    raw += b" " * (-len(raw) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + body)


def test_packed_header_disagreeing_with_tensors_is_refused(qat_file, tmp_path):
    _, path = qat_file
    bad = str(tmp_path / "bad.packed")

    def wrong_group(meta, _):
        meta["tensors"]["layers.0.attn.wq.weight"]["group"] = 64
    _rewrite_header(path, bad, wrong_group)
    with pytest.raises(CidermillError, match="layers.0.attn.wq.weight.scale"):
        packed.load_packed(bad)

    def wrong_bits(meta, _):
        meta["tensors"]["layers.1.mlp.w_up.weight"]["bits"] = 4
    _rewrite_header(path, bad, wrong_bits)
    with pytest.raises(CidermillError, match="layers.1.mlp.w_up.weight.codes"):
        packed.load_packed(bad)

    def dropped(meta, _):
        del meta["tensors"]["norm.weight"]
    _rewrite_header(path, bad, dropped)
    with pytest.raises(CidermillError, match="missing \\['norm.weight'\\]"):
        packed.load_packed(bad)


def test_gptq_beats_rtn_on_correlated_inputs():
    g = torch.Generator().manual_seed(3)
    X = torch.randn(512, 64, generator=g) @ torch.randn(64, 64, generator=g)  # correlated features
    W = torch.randn(32, 64, generator=g)
    H = X.t() @ X / len(X)
    q_gptq = ptq.gptq_weight(W, H, 2, 64).dequantize()
    q_rtn = grid.quantize(W, 1.0, 2, 64).dequantize()
    assert (X @ (W - q_gptq).t()).norm() < 0.8 * (X @ (W - q_rtn).t()).norm()


def test_lora_merge_save_load_and_foreign_base(tmp_path):
    base = _tiny()
    state = {k: v.clone() for k, v in base.state_dict().items()}
    m = lora.add_lora(base, rank=4, alpha=16)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05, generator=torch.Generator().manual_seed(len(name)))
    ids = _ids()
    with torch.no_grad():
        unmerged = m(ids).logits
        merged = lora.merged_copy(m)(ids).logits
    torch.testing.assert_close(merged, unmerged, atol=1e-5, rtol=1e-5)
    assert (unmerged - build_model(base.config).requires_grad_(False)(ids).logits).abs().max() > 0
    lora.save_adapter(m, str(tmp_path / "ad"))
    assert sorted(os.listdir(tmp_path / "ad")) == ["adapter_config.json", "adapter_model.safetensors",
                                                  "cidermill_base.json"]
    fresh = _tiny(seed=5)
    fresh.load_state_dict(state)
    with torch.no_grad():
        assert torch.equal(lora.load_adapter(fresh, str(tmp_path / "ad"))(ids).logits, unmerged)
    with pytest.raises(CidermillError, match="another base"):
        lora.load_adapter(_tiny(seed=9), str(tmp_path / "ad"))


def test_astc_round_trip_and_missing_encoder(tmp_path, monkeypatch):
    from training.quant import astc
    w = torch.randn(36, 60, generator=torch.Generator().manual_seed(4)) * torch.linspace(0.1, 2, 36)[:, None]
    if astc.shutil.which("astcenc"):
        w_hat, info = astc.compress_matrix(w, str(tmp_path), "row", "-fast")
        assert info["astc_bytes"] == 16 + 16 * (36 // 6) * (60 // 6)  # 128 bits per 6x6 block
        assert 8 * info["astc_bytes"] / w.numel() == pytest.approx(3.556 + 128 / w.numel(), abs=1e-3)
        assert w_hat.shape == w.shape and info["rel_error"] < 0.35
    monkeypatch.setenv("PATH", "")
    with pytest.raises(CidermillError, match="astcenc not found"):
        astc.compress_matrix(w, str(tmp_path))


def test_int8_kv_cache_loss_close_to_float():
    m = _tiny().eval()
    w = _ids(3, 17)
    full = evaluate.heldout_loss(m, w)
    assert evaluate.cached_loss(m, w, kv_int8=False) == pytest.approx(full, abs=1e-4)
    assert evaluate.cached_loss(m, w, kv_int8=True) == pytest.approx(full, abs=2e-2)


def test_packed_linears_kept_packed_match_the_dequantised_model(qat_file):
    from training.quant.packed_linear import PackedLinear2
    _, path = qat_file
    flat, _ = packed.load_packed(path)
    kept, _ = packed.load_packed(path, keep_packed=True)
    assert sum(isinstance(m, PackedLinear2) for m in kept.modules()) == 4 * 7
    ids = _ids(2, 10)
    with torch.no_grad():
        torch.testing.assert_close(kept(ids).logits, flat(ids).logits, atol=1e-5, rtol=1e-5)


def test_generator_loads_a_packed_base_and_its_recovery_adapter(qat_file, tmp_path):
    """`generate --checkpoint model.packed --adapter lora/`: the packed file is a base the generator
    opens, and a recovery adapter trained on it gives the same logits there as in training."""
    from inference.generator import load_checkpoint_model
    _, path = qat_file
    base, _ = packed.load_packed(path)
    tuned = lora.add_lora(base, rank=4, alpha=8)
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for name, p in tuned.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    lora.save_adapter(tuned, str(tmp_path / "rec"))
    opened = load_checkpoint_model(path)
    from inference.adapters import Adapters
    ads = Adapters(opened)
    name = ads.load(str(tmp_path / "rec"))
    ids = _ids(1, 12)
    with torch.no_grad(), ads.active(name):
        assert torch.allclose(opened(ids).logits, tuned(ids).logits, atol=1e-5)
    with torch.no_grad():
        assert not torch.allclose(opened(ids).logits, tuned(ids).logits, atol=1e-3)
