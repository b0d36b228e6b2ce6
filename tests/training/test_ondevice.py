"""On-device model: block 2 has no K/V projections and reads block 1's last KV; 62.5% KV cache."""
import dataclasses

import torch

from training.models import build_model, get_preset
from training.models.info import dense_twin, describe, kv_bytes

V = 4096


def test_block2_layers_have_no_kv_projections():
    model = build_model(get_preset("ondevice-tiny"))
    n1 = model.config.block1_layers
    assert (n1, model.config.n_layers) == (5, 8)  # 5:3
    for i, layer in enumerate(model.layers):
        assert hasattr(layer.attn, "wk") == (i < n1)
        assert hasattr(layer.attn, "wv") == (i < n1)
    twin = build_model(dense_twin(model.config))
    cfg = model.config
    kv_params = 2 * cfg.d_model * cfg.n_kv_heads * cfg.attn_head_dim + cfg.attn_head_dim  # wk, wv, k_norm
    assert twin.num_parameters() - model.num_parameters() == 3 * kv_params


def test_allocated_kv_cache_is_62_5_percent_of_dense_twin():
    """Measured from the allocated cache tensors, not computed from the config."""
    cfg = get_preset("ondevice-tiny")
    model, twin = build_model(cfg), build_model(dense_twin(cfg))
    for int8 in (False, True):
        a = model.allocate_kv_cache(2, 200, kv_int8=int8)
        b = twin.allocate_kv_cache(2, 200, kv_int8=int8)
        assert len(a.layers) == 5 and len(b.layers) == 8
        assert a.nbytes() / b.nbytes() == 0.625
        measured = sum(t.numel() * t.element_size() for c in a.layers.values() for t in c.tensors())
        assert measured == a.nbytes()


def test_block2_reads_block1_final_layer_keys():
    """Changing layer n1-1's key projection changes block 2's output; block 2 has none of its own."""
    torch.manual_seed(0)
    model = build_model(get_preset("ondevice-tiny")).eval()
    x = torch.randint(0, V, (1, 12))
    seen = {}
    model.layers[5].attn.register_forward_hook(lambda m, a, out: seen.__setitem__("kv", out[1]))
    model.layers[4].attn.register_forward_hook(lambda m, a, out: seen.__setitem__("src", out[1]))
    with torch.no_grad():
        model(x)
    assert seen["kv"][0] is seen["src"][0] and seen["kv"][1] is seen["src"][1]


def test_logits_with_and_without_cache_path_match():
    torch.manual_seed(0)
    model = build_model(get_preset("ondevice-tiny")).eval()
    x = torch.randint(0, V, (2, 40))
    with torch.no_grad():
        full = model(x).logits
        cache = model.allocate_kv_cache(2, 40)
        parts = [model(x[:, :17], cache=cache).logits]
        parts += [model(x[:, t:t + 1], cache=cache).logits for t in range(17, 40)]
    torch.testing.assert_close(torch.cat(parts, 1), full, rtol=1e-4, atol=1e-4)


def test_ondevice_3b_published_shape_on_meta():
    """Counted on the meta device: the 3B model is never allocated in tests."""
    cfg = get_preset("ondevice-3b")
    info = describe(cfg)
    assert 3.0e9 < info["params_total"] < 3.2e9
    assert info["kv_bf16"]["per_token"] == 35 * 2 * 2 * 128 * 2  # 35 layers x (k, v) x 2 heads x 128 x bf16
    twin = kv_bytes(dataclasses.replace(cfg, arch="dense", block1_layers=0))["per_token"]
    assert info["kv_bf16"]["per_token"] / twin == 0.625
