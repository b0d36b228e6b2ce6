"""PT-MoE: L/D sync points, independent tracks inside a block, real sliding window, track parallel."""
import dataclasses
import os
import socket

import pytest
import torch
import torch.multiprocessing as mp

from training.models import build_model, get_preset
from training.models.layers import Attention
from training.models.moe import MoE

V = 4096


def cfg_(**kw):
    return dataclasses.replace(get_preset("ptmoe-tiny"), **kw)


@pytest.mark.parametrize("n_layers,D", [(8, 4), (8, 2), (4, 4)])
def test_sync_points_per_forward_is_L_over_D(n_layers, D):
    model = build_model(cfg_(n_layers=n_layers, track_block_depth=D, n_tracks=3))
    calls = []
    model.track_sync.register_forward_hook(lambda m, args, out: calls.append(len(args[0])))
    model(torch.randint(0, V, (1, 16)))
    assert len(calls) == n_layers // D == model.config.sync_points
    assert calls == [3] * (n_layers // D)  # every sync sees all 3 tracks' streams


def test_layer_pattern_three_local_rope_then_one_global_nope_and_moe_every_other():
    model = build_model(get_preset("ptmoe-tiny"))
    for t in ("0", "1"):
        for i, layer in enumerate(model.tracks[t].layers):
            is_global = i % 4 == 3
            assert layer.attn.window == (None if is_global else 64)
            assert layer.attn.use_rope == (not is_global)
            assert isinstance(layer.mlp, MoE) == (i % 2 == 1)
    # experts are local to a track: each track has its own expert tensors
    assert model.tracks["0"].layers[1].mlp.experts.w_up is not model.tracks["1"].layers[1].mlp.experts.w_up


def test_tracks_are_independent_between_boundaries():
    """Inside block 1, track 0's activations have zero gradient w.r.t. track 1's block-1 weights,
    while they do depend on track 1's block-0 weights (through the sync)."""
    torch.manual_seed(0)
    model = build_model(get_preset("ptmoe-tiny"))
    acts = {}
    last = model.tracks["0"].layers[7]  # last layer of block 1 (layers 4..7) in track 0
    last.register_forward_hook(lambda m, a, out: acts.update(h=out[0]))
    model(torch.randint(0, V, (2, 16)))
    h = acts["h"]
    other_block1 = [p for i in range(4, 8) for p in model.tracks["1"].layers[i].parameters()]
    other_block0 = [p for i in range(0, 4) for p in model.tracks["1"].layers[i].parameters()]
    g1 = torch.autograd.grad(h.square().sum(), other_block1, allow_unused=True, retain_graph=True)
    assert all(g is None or g.abs().max() == 0 for g in g1)
    g0 = torch.autograd.grad(h.square().sum(), other_block0, allow_unused=True)
    assert any(g is not None and g.abs().max() > 0 for g in g0)


def test_sliding_window_limits_attention():
    """A key outside the window has exactly zero influence on a local layer's output."""
    torch.manual_seed(0)
    cfg = cfg_(sliding_window=8, max_seq_len=64)
    local = Attention(cfg, window=8, use_rope=False)
    glob = Attention(cfg, window=None, use_rope=False)
    x = torch.randn(1, 32, cfg.d_model, requires_grad=True)
    t = 30
    for attn, expect_far in ((local, False), (glob, True)):
        out, _ = attn(x)
        (gx,) = torch.autograd.grad(out[0, t].sum(), x)
        influence = gx[0].abs().sum(-1)
        assert (influence[: t - 8 + 1] > 0).any() == expect_far  # keys at t-8 and earlier
        assert (influence[t - 7: t + 1] > 0).all()               # the 8 keys in the window
        assert (influence[t + 1:] == 0).all()                    # causal


def test_local_tracks_subset_names_and_init_match_full_model():
    torch.manual_seed(5)
    full = build_model(get_preset("ptmoe-tiny"))
    torch.manual_seed(5)
    part = build_model(get_preset("ptmoe-tiny"), local_tracks=[1], group=object())
    sf, sp = full.state_dict(), part.state_dict()
    assert set(sp) <= set(sf) and not any(k.startswith("tracks.0.") for k in sp)
    assert all(torch.equal(sf[k], v) for k, v in sp.items())
    with pytest.raises(ValueError, match="process group"):
        build_model(get_preset("ptmoe-tiny"), local_tracks=[0])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _track_parallel_worker(rank, world, port, path, queue):
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        state, x, y = torch.load(path)
        cfg = get_preset("ptmoe-tiny")
        model = build_model(cfg, local_tracks=[rank], group=dist.group.WORLD)
        model.load_state_dict({k: v for k, v in state.items() if k in model.state_dict()})
        calls = []
        orig = dist.all_reduce

        def counting(*a, **k):
            calls.append(1)
            return orig(*a, **k)

        dist.all_reduce = counting
        out = model(x, targets=y)
        n_forward = len(calls)
        out.loss.backward()
        dist.all_reduce = orig
        grads = {k: p.grad.numpy().copy() for k, p in model.named_parameters()}  # pickled by value
        queue.put((rank, out.loss.item(), n_forward, grads))
    finally:
        dist.destroy_process_group()


def test_track_parallel_matches_single_process(tmp_path):
    """2 gloo processes, one track each: same loss and gradients as one process holding both,
    with exactly L/D all-reduces in the forward."""
    torch.manual_seed(0)
    cfg = get_preset("ptmoe-tiny")
    full = build_model(cfg)
    x, y = torch.randint(0, V, (2, 24)), torch.randint(0, V, (2, 24))
    out = full(x, targets=y)
    out.loss.backward()
    path = tmp_path / "inputs.pt"
    torch.save(({k: v.clone() for k, v in full.state_dict().items()}, x, y), path)
    ctx = mp.get_context("fork")  # no re-import of torch in the workers
    queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_track_parallel_worker, args=(r, 2, port, str(path), queue))
             for r in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    full_grads = {k: p.grad for k, p in full.named_parameters()}
    for rank, loss, n_forward, grads in results:
        assert loss == pytest.approx(out.loss.item(), rel=1e-5)
        assert n_forward == cfg.n_layers // cfg.track_block_depth
        for k, g in grads.items():
            torch.testing.assert_close(torch.from_numpy(g), full_grads[k], rtol=1e-4, atol=1e-6)
