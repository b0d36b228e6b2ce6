"""Configs, presets, building blocks, the dense baseline, MoE routing and sparse-upcycling names."""
import dataclasses

import pytest
import torch
import torch.nn.functional as F

from corpus.errors import ConfigError
from training.models import (SequenceTooLongError, build_model, config_from_dict, get_preset,
                             list_presets)
from training.models.layers import positions_from_doc_ids
from training.models.moe import MoE

V = 4096


def small(name="tiny", **kw):
    return dataclasses.replace(get_preset(name), **kw)


# ---- configs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("field,kw", [
    ("n_heads", dict(d_model=130, n_heads=4)),                        # heads do not divide hidden size
    ("sliding_window", dict(sliding_window=512, max_seq_len=256)),    # window larger than context
    ("track_block_depth", dict(arch="ptmoe", n_layers=6, track_block_depth=4)),  # D does not divide L
    ("n_experts", dict(moe_every=2, n_experts=2, top_k=4)),           # experts < top-k
    ("n_kv_heads", dict(n_heads=4, n_kv_heads=3)),
    ("arch", dict(arch="transformerxl")),
    ("kernels", dict(kernels="cuda")),
    ("block1_layers", dict(arch="ondevice", n_layers=4, block1_layers=4)),
    ("vocab_size", dict(vocab_size=0)),
    ("d_model", dict(d_model="128")),
])
def test_invalid_configs_fail_at_construction_naming_the_field(field, kw):
    with pytest.raises(ConfigError, match=field):
        small(**kw)


def test_config_dict_round_trip_and_unknown_keys():
    cfg = get_preset("ptmoe-tiny")
    assert config_from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="n_layer"):
        config_from_dict({**cfg.to_dict(), "n_layer": 3})


def test_presets():
    assert {"tiny", "ondevice-3b", "ptmoe-small", "ptmoe-1b"} <= set(list_presets())
    assert build_model(get_preset("tiny")).num_parameters() < 5_000_000
    with pytest.raises(ConfigError, match="unknown model preset"):
        get_preset("gpt-5")
    c = get_preset("ondevice-3b")  # the published shape, never instantiated at full size here
    assert (c.n_layers, c.block1_layers, c.d_model, c.n_heads, c.attn_head_dim, c.n_kv_heads,
            c.ffn_hidden, c.rope_theta, c.vocab_size) == (56, 35, 2048, 16, 128, 2, 6656, 5e5, 153_600)
    assert c.qk_norm and c.tie_embeddings


def test_model_config_is_the_config_and_replace_works():
    cfg = small(vocab_size=1000)
    model = build_model(cfg)
    assert model.config is cfg
    assert model.tok_embeddings.weight.shape == (1000, 128)


def test_same_seed_same_weights():
    torch.manual_seed(3)
    a = build_model(get_preset("tiny")).state_dict()
    torch.manual_seed(3)
    b = build_model(get_preset("tiny")).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


# ---- forward / loss ----------------------------------------------------------------------------
def test_dense_forward_loss_and_fused_path():
    torch.manual_seed(0)
    model = build_model(get_preset("tiny"))
    x = torch.randint(0, V, (2, 33))
    y = torch.randint(0, V, (2, 33))
    y[0, :5] = -100
    out = model(x)
    assert out.logits.shape == (2, 33, V) and out.loss is None
    assert out.aux_loss.dim() == 0 and out.aux_loss.item() == 0.0
    fused = model(x, targets=y)
    assert fused.logits is None
    ref = F.cross_entropy(out.logits.reshape(-1, V), y.reshape(-1), ignore_index=-100)
    torch.testing.assert_close(fused.loss, ref, rtol=1e-5, atol=1e-5)
    both = model(x, targets=y, return_logits=True)
    torch.testing.assert_close(both.loss, ref, rtol=1e-5, atol=1e-5)
    fused.loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def test_too_long_sequence_is_a_clear_error():
    model = build_model(get_preset("tiny"))
    with pytest.raises(SequenceTooLongError, match="max_seq_len=256"):
        model(torch.zeros(1, 257, dtype=torch.long))


def test_positions_restart_per_document():
    doc = torch.tensor([[0, 0, 0, 1, 1, 2, 2, 2, 2]])
    assert positions_from_doc_ids(doc).tolist() == [[0, 1, 2, 0, 1, 0, 1, 2, 3]]


@pytest.mark.parametrize("preset", ["tiny", "ptmoe-tiny"])
def test_doc_ids_isolate_documents(preset):
    """A packed document gives the same logits as that document alone: no attention across the
    boundary and RoPE positions restarting at 0."""
    torch.manual_seed(0)
    cfg = small(preset, sliding_window=16, max_seq_len=64) if preset == "ptmoe-tiny" else small(preset)
    model = build_model(cfg).eval()
    a, b = torch.randint(0, V, (1, 20)), torch.randint(0, V, (1, 27))
    packed = torch.cat([a, b], 1)
    doc = torch.tensor([[0] * 20 + [1] * 27])
    with torch.no_grad():
        out = model(packed, doc_ids=doc).logits
        torch.testing.assert_close(out[:, :20], model(a).logits, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(out[:, 20:], model(b).logits, rtol=1e-4, atol=1e-4)
        assert not torch.allclose(model(packed).logits[:, 20:], out[:, 20:], atol=1e-3)


def test_resize_token_embeddings_keeps_old_logits():
    torch.manual_seed(0)
    model = build_model(get_preset("tiny")).eval()
    x = torch.randint(0, V, (1, 16))
    with torch.no_grad():
        before = model(x).logits
        rows = torch.randn(100, 128) * 0.02
        model.resize_token_embeddings(V + 100, rows)
        after = model(x).logits
    assert model.config.vocab_size == V + 100 and after.shape[-1] == V + 100
    torch.testing.assert_close(after[..., :V], before)
    assert torch.equal(model.tok_embeddings.weight[V:], rows)
    assert model.output_weight() is model.tok_embeddings.weight  # tied output grew with it


# ---- MoE ---------------------------------------------------------------------------------------
def test_moe_is_dropless_and_matches_per_token_loop():
    torch.manual_seed(0)
    cfg = small(moe_every=1, n_experts=4, top_k=2, expert_ffn_hidden=64, shared_expert=True)
    moe = MoE(cfg)
    for p in moe.parameters():
        torch.nn.init.normal_(p, std=0.1)
    x = torch.randn(2, 7, 128)
    y, aux = moe(x)
    xf = x.reshape(-1, 128)
    _, _, idx, w = moe.route(xf)
    e = moe.experts
    want = torch.stack([
        sum(w[n, j] * (F.silu(xf[n] @ e.w_gate[idx[n, j]]) * (xf[n] @ e.w_up[idx[n, j]])) @ e.w_down[idx[n, j]]
            for j in range(2)) + moe.shared(xf[n])[0]
        for n in range(xf.shape[0])])
    torch.testing.assert_close(y.reshape(-1, 128), want, rtol=1e-4, atol=1e-5)
    assert aux.dim() == 0


def test_moe_aux_loss_is_the_switch_formula():
    """aux = a * E * sum_e f_e * P_e + z * mean_n logsumexp(logits_n)^2, with f_e the share of the
    N*k assignments that go to expert e and P_e the mean router probability of e (Switch
    Transformer eq. 4, top-k counted per assignment), written out here token by token."""
    torch.manual_seed(1)
    E, k, a, z = 4, 2, 0.01, 0.001
    moe = MoE(small(moe_every=1, n_experts=E, top_k=k, router_aux_coef=a, router_z_coef=z))
    torch.nn.init.normal_(moe.router.weight, std=0.3)
    x = torch.randn(2, 7, 128)
    _, aux = moe(x)
    logits = (x.reshape(-1, 128) @ moe.router.weight.T).double()
    N = logits.shape[0]
    probs = [[float(v) for v in torch.softmax(row, 0)] for row in logits]
    chosen = [sorted(range(E), key=lambda e: -p[e])[:k] for p in probs]
    f = [sum(e in c for c in chosen) / (N * k) for e in range(E)]
    P = [sum(p[e] for p in probs) / N for e in range(E)]
    lse = [float(torch.logsumexp(row, 0)) for row in logits]
    want = a * E * sum(fe * pe for fe, pe in zip(f, P)) + z * sum(v * v for v in lse) / N
    assert aux.item() == pytest.approx(want, rel=1e-4)


def test_moe_aux_loss_is_least_at_uniform_routing():
    """With router probabilities that agree with the assignments, the balance term is E * sum f_e^2:
    over every way of sending 8 tokens to 4 experts it is least (1.0) when each expert gets 2, and
    largest (E) when one expert gets all of them."""
    E, N = 4, 8
    moe = MoE(small(moe_every=1, n_experts=E, top_k=1, router_aux_coef=1.0, router_z_coef=0.0))
    values = {}
    for c0 in range(N + 1):
        for c1 in range(N + 1 - c0):
            for c2 in range(N + 1 - c0 - c1):
                counts = (c0, c1, c2, N - c0 - c1 - c2)
                idx = torch.tensor([e for e, c in enumerate(counts) for _ in range(c)])[:, None]
                logits = 30.0 * F.one_hot(idx[:, 0], E).float()  # each token's probability ~1 on its expert
                values[counts] = moe.aux_loss(logits, torch.softmax(logits, -1), idx).item()
    assert len(values) == 165
    best = min(values, key=values.get)
    assert best == (2, 2, 2, 2) and values[best] == pytest.approx(1.0, abs=1e-6)
    assert sorted(values.values())[1] == pytest.approx(1.125)  # one token moved: 4 * (9 + 1 + 4 + 4) / 64
    assert max(values.values()) == pytest.approx(E, abs=1e-6) and values[(8, 0, 0, 0)] == max(values.values())


def test_moe_aux_loss_balanced_value():
    cfg = small(moe_every=1, n_experts=4, top_k=1, router_aux_coef=1.0, router_z_coef=0.0)
    moe = MoE(cfg)
    with torch.no_grad():
        moe.router.weight.zero_()
    logits, probs, idx, _ = moe.route(torch.randn(8, 128))
    idx = torch.arange(8).remainder(4)[:, None]  # a perfectly balanced assignment
    assert moe.aux_loss(logits, probs, idx).item() == pytest.approx(1.0)


def test_upcycling_by_the_documented_names_reproduces_the_dense_model():
    """README recipe: copy layers.{i}.mlp.w_*.weight (transposed) into every expert of
    layers.{i}.mlp.experts.w_*, zero layers.{i}.mlp.router.weight."""
    torch.manual_seed(0)
    dense_cfg = get_preset("tiny")
    dense = build_model(dense_cfg).eval()
    moe_cfg = dataclasses.replace(dense_cfg, moe_every=2, n_experts=4, top_k=2)
    sparse = build_model(moe_cfg).eval()
    sd, new = dense.state_dict(), {}
    for k, v in sparse.state_dict().items():
        if ".mlp.experts." in k:
            w = sd[k.replace("experts.", "").replace("w_gate", "w_gate.weight")
                   .replace("w_up", "w_up.weight").replace("w_down", "w_down.weight")]
            new[k] = w.t().unsqueeze(0).expand_as(v).clone()
        elif k.endswith("mlp.router.weight"):
            new[k] = torch.zeros_like(v)
        else:
            new[k] = sd[k]
    sparse.load_state_dict(new)
    x = torch.randint(0, V, (2, 24))
    with torch.no_grad():
        torch.testing.assert_close(sparse(x).logits, dense(x).logits, rtol=1e-4, atol=1e-4)
    assert isinstance(sparse.layers[1].mlp, MoE) and not isinstance(sparse.layers[0].mlp, MoE)
