"""Triton kernels vs their eager references: values and gradients, fp32 and bf16, odd shapes.

Runs on CPU through TRITON_INTERPRET=1 (tests/conftest.py), so shapes stay tiny. bf16 is
compared by relative error norm: the kernels keep bf16 intermediates (and the interpreter rounds
fp32->bf16 by truncation), so elementwise ulp-level checks would test the rounding, not the math.
"""
import pytest
import torch

from training.kernels import ops
from training.kernels import reference as ref

DTYPES = [torch.float32, torch.bfloat16]


def close(a, b, dtype, what=""):
    a, b = a.detach().float(), b.detach().float()
    assert a.shape == b.shape, what
    if dtype == torch.float32:
        torch.testing.assert_close(a, b, atol=2e-5, rtol=1e-4, msg=lambda m: f"{what}: {m}")
    else:
        err = (a - b).norm() / b.norm().clamp_min(1e-6)
        assert err < 2e-2, f"{what}: relative error {err:.4f}"


def both(fn, inputs, dtype, seed=1):
    """Run fn(impl) for triton and reference; compare outputs and input grads."""
    res = []
    for impl in ("triton", "reference"):
        outs = fn(impl)
        outs = outs if isinstance(outs, tuple) else (outs,)
        g = torch.Generator().manual_seed(seed)
        grads_out = [torch.randn(o.shape, generator=g).to(o.dtype) for o in outs]
        grads = torch.autograd.grad(outs, inputs, grads_out) if inputs else ()
        res.append((outs, grads))
    (ot, gt), (orf, grf) = res
    for i, (a, b) in enumerate(zip(ot, orf)):
        close(a, b, dtype, f"output {i}")
    for i, (a, b) in enumerate(zip(gt, grf)):
        close(a, b, dtype, f"grad {i}")


def rnd(*shape, dtype, scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return (torch.randn(*shape, generator=g) * scale).to(dtype).requires_grad_()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5, 37), (2, 130), (130, 700)])
def test_rms_norm(dtype, shape):
    x, w = rnd(*shape, dtype=dtype), rnd(shape[-1], dtype=dtype, seed=7)
    both(lambda impl: ops.rms_norm(x, w, 1e-5, impl=impl), (x, w), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_swiglu(dtype):
    g, u = rnd(3, 7, 33, dtype=dtype), rnd(3, 7, 33, dtype=dtype, seed=3)
    both(lambda impl: ops.swiglu(g, u, impl=impl), (g, u), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched_positions", [False, True])
def test_rope(dtype, batched_positions):
    q, k = rnd(2, 3, 11, 12, dtype=dtype), rnd(2, 1, 11, 12, dtype=dtype, seed=5)
    pos = torch.randint(0, 500, (2, 11)) if batched_positions else 11
    cos, sin = ops.rope_cos_sin(pos, 12, theta=500000.0)
    both(lambda impl: ops.apply_rope(q, k, cos, sin, impl=impl), (q, k), dtype)


def test_rope_without_k():
    q = rnd(1, 2, 5, 8, dtype=torch.float32)
    cos, sin = ops.rope_cos_sin(5, 8)
    both(lambda impl: ops.apply_rope(q, None, cos, sin, impl=impl)[0], (q,), torch.float32)
    assert ops.apply_rope(q, None, cos, sin, impl="triton")[1] is None


def test_rope_rotates_pairs_by_position_angle():
    q = torch.zeros(1, 1, 3, 4)
    q[..., 0] = 1.0  # x1 of pair 0
    cos, sin = ops.rope_cos_sin(3, 4, theta=10000.0)
    out, _ = ops.apply_rope(q, q, cos, sin, impl="triton")
    t = torch.arange(3.0)
    torch.testing.assert_close(out[0, 0, :, 0], torch.cos(t))
    torch.testing.assert_close(out[0, 0, :, 2], torch.sin(t))


ATTN_CASES = [  # B, H, Hkv, Tq, Tk, D, causal, window, doc
    (1, 4, 2, 37, 37, 24, True, None, False),     # GQA, odd T and D
    (2, 2, 1, 50, 50, 16, True, 9, False),        # sliding window skipping whole blocks
    (1, 2, 2, 40, 40, 16, True, 13, True),        # window + documents
    (1, 2, 1, 5, 41, 16, True, None, False),      # queries end-aligned (cached decode)
    (1, 2, 1, 7, 45, 16, True, 11, False),        # decode chunk against a windowed cache
    (1, 2, 1, 33, 33, 16, False, None, False),    # bidirectional
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ATTN_CASES, ids=lambda c: "-".join(map(str, c)))
def test_attention(dtype, case):
    B, H, Hkv, Tq, Tk, D, causal, window, doc = case
    q, k, v = rnd(B, H, Tq, D, dtype=dtype), rnd(B, Hkv, Tk, D, dtype=dtype, seed=1), \
        rnd(B, Hkv, Tk, D, dtype=dtype, seed=2)
    doc_ids = torch.cumsum((torch.rand(B, Tk, generator=torch.Generator().manual_seed(0))
                            < 0.1).int(), 1) if doc else None
    both(lambda impl: ops.attention(q, k, v, causal, window, doc_ids, impl=impl), (q, k, v),
         dtype)


def test_attention_reference_matches_sdpa():
    q, k, v = torch.randn(2, 4, 9, 8), torch.randn(2, 2, 9, 8), torch.randn(2, 2, 9, 8)
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True)
    torch.testing.assert_close(ref.attention(q, k, v), want, atol=1e-5, rtol=1e-5)


def test_attention_window_and_docs_cut_influence():
    """A key outside the window / in another document has exactly zero influence."""
    q, k, v = rnd(1, 2, 20, 16, dtype=torch.float32), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)
    v = v.requires_grad_()
    docs = torch.tensor([[0] * 12 + [1] * 8])
    out = ops.attention(q, k, v, window=5, doc_ids=docs, impl="triton")
    gv, = torch.autograd.grad(out[0, :, 19].sum(), v)
    assert gv[0, 0, :15].abs().max() == 0 and gv[0, 0, 15:].abs().min() > 0
    gv, = torch.autograd.grad(ops.attention(q, k, v, window=5, doc_ids=docs, impl="triton")
                              [0, :, 13].sum(), v)
    assert gv[0, 0, :12].abs().max() == 0 and gv[0, 0, 12:14].abs().min() > 0


def test_attention_rejects_bad_shapes():
    with pytest.raises(ValueError, match="multiple"):
        ops.attention(torch.randn(1, 3, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8))
    with pytest.raises(ValueError, match="window"):
        ops.attention(torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8),
                      causal=False, window=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_moe_mlp(dtype):
    N, d, f, E, k = 21, 24, 40, 5, 2
    g = torch.Generator().manual_seed(0)
    idx = torch.stack([torch.randperm(E, generator=g)[:k] for _ in range(N)])
    idx[idx == 3] = 1            # expert 3 gets no token; expert 1 gets many (uneven routing)
    idx[:, 1] = torch.where(idx[:, 1] == idx[:, 0], (idx[:, 0] + 1) % E, idx[:, 1])
    x = rnd(N, d, dtype=dtype)
    w = torch.rand(N, k, generator=g).to(dtype).requires_grad_()
    wg, wu = rnd(E, d, f, dtype=dtype, scale=0.2, seed=1), rnd(E, d, f, dtype=dtype, scale=0.2, seed=2)
    wd = rnd(E, f, d, dtype=dtype, scale=0.2, seed=3)
    both(lambda impl: ops.moe_mlp(x, idx, w, wg, wu, wd, impl=impl), (x, w, wg, wu, wd), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_cross_entropy(dtype):
    from training.kernels.linear_ce import linear_cross_entropy as lce
    h, W = rnd(13, 24, dtype=dtype), rnd(301, 24, dtype=dtype, scale=0.3, seed=4)
    t = torch.randint(0, 301, (13,), generator=torch.Generator().manual_seed(0))
    t[3] = t[8] = -100
    res = []
    for fn in (lambda: lce(h, W, t, chunk=100), lambda: ref.linear_cross_entropy(h, W, t)):
        loss = fn()
        res.append((loss,) + torch.autograd.grad(loss * 1.7, (h, W)))
    for a, b in zip(*res):
        close(a, b, dtype)
    assert ops.linear_cross_entropy(h, W, t, impl="triton").item() == pytest.approx(
        res[1][0].item(), rel=1e-2)


def test_linear_cross_entropy_all_ignored_is_zero():
    h, W = torch.randn(4, 8), torch.randn(20, 8)
    t = torch.full((4,), -100)
    assert ops.linear_cross_entropy(h, W, t, impl="triton").item() == 0.0
    assert ops.linear_cross_entropy(h, W, t, impl="reference").item() == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_kv_int8(dtype):
    x = torch.randn(2, 3, 7, 20).to(dtype)
    x[0, 0, 0] = 0
    qt, st = ops.quantize_kv_int8(x, impl="triton")
    qr, sr = ops.quantize_kv_int8(x, impl="reference")
    assert qt.dtype == torch.int8 and st.shape == (2, 3, 7, 1)
    assert torch.equal(qt, qr) and torch.equal(st, sr)
    back = ops.dequantize_kv_int8(qt, st, impl="triton")
    torch.testing.assert_close(back, ops.dequantize_kv_int8(qr, sr, impl="reference"))
    # symmetric round-to-nearest: error at most half a step per element
    assert ((back - x.float()).abs() <= st * 0.5 + 1e-6).all()


def test_dispatch():
    x = torch.randn(2, 8)
    assert ops.resolve_impl("auto", x) == "reference"
    with ops.use_impl("triton"):
        assert ops.resolve_impl("auto", x) == "triton"
        assert ops.resolve_impl("reference", x) == "reference"
    assert ops.get_default_impl() == "auto"
    with pytest.raises(ValueError):
        ops.resolve_impl("cuda", x)


def test_without_interpreter_cpu_gets_reference_and_bench_exits_cleanly():
    """No GPU and no TRITON_INTERPRET: "auto" runs the reference, forcing Triton is one clear
    error, and bench/kernels.py says there is nothing to time and exits 0."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["CUDA_VISIBLE_DEVICES"] = ""
    code = (
        "import torch, runpy, sys\n"
        "from training.kernels import ops\n"
        "x = torch.randn(2, 8)\n"
        "assert ops.rms_norm(x, torch.ones(8)).shape == (2, 8)\n"
        "try:\n"
        "    ops.rms_norm(x, torch.ones(8), impl='triton')\n"
        "    sys.exit('no error')\n"
        "except RuntimeError as e:\n"
        "    assert 'TRITON_INTERPRET' in str(e)\n"
        "sys.argv = ['bench/kernels.py']\n"
        "runpy.run_path('bench/kernels.py', run_name='__main__')\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "no CUDA GPU" in p.stdout
