"""GPU benchmark of the fused Triton kernels against their peers.

For each kernel (forward, and forward+backward where training needs it) it times the Triton
kernel, the eager reference, ``torch.compile`` of the reference and, for attention, PyTorch SDPA
and FlexAttention, with ``triton.testing.do_bench`` (median ms). It prints the time, the
speed-up of each peer over the eager reference, and achieved GB/s (memory-bound kernels) or
TFLOP/s (matmul-bound kernels; causal attention counts only the unmasked half).

Usage:  python bench/kernels.py [--only attention,moe] [--quick] [--no-compile]
        python bench/kernels.py --compile-check   # no GPU needed: compile every kernel for sm_90
Shapes follow the ondevice-3b preset (hidden 2048, 16x128 query heads, 2 KV heads, SwiGLU 6656,
vocab 153,600) at 16k tokens per step. Needs a CUDA GPU (written for H100/H200); on a machine
without one it says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

if "--smoke" in sys.argv:  # before torch/triton are imported
    os.environ["TRITON_INTERPRET"] = "1"
if "--compile-check" in sys.argv:
    os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402


NO_COMPILE = False  # --no-compile: skip the torch.compile peer
SMOKE = False  # --smoke: tiny CPU shapes through TRITON_INTERPRET, one timed call (wiring check)


def _bench(fn, grad_to_none=None):
    if SMOKE:
        fn()
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    import triton.testing
    return triton.testing.do_bench(fn, warmup=25, rep=100, grad_to_none=grad_to_none,
                                   return_mode="median")


def _fb(f, inputs):
    """forward+backward closure (gradients of a fixed random cotangent)."""
    out = f()
    outs = out if isinstance(out, tuple) else (out,)
    gs = [torch.randn_like(o) for o in outs]

    def run():
        o = f()
        o = o if isinstance(o, tuple) else (o,)
        torch.autograd.backward(o, gs)
    return run


class Table:
    def __init__(self):
        self.rows = []

    def add(self, kernel, mode, impl, ms, work, unit, base_ms):
        rate = work / (ms * 1e-3) / (1e9 if unit == "GB/s" else 1e12) if ms == ms else float("nan")
        ratio = base_ms / ms if ms == ms and base_ms == base_ms else float("nan")
        self.rows.append((kernel, mode, impl, ms, ratio, rate, unit))
        print(f"{kernel:<22}{mode:<9}{impl:<18}{ms:>10.3f}{ratio:>10.2f}x{rate:>11.1f} {unit}",
              flush=True)


def _time(name, fn, grad_to_none):
    try:
        return _bench(fn, grad_to_none)
    except Exception as e:  # a peer that cannot run this case (OOM, unsupported) is reported, not fatal
        print(f"  [{name}: {type(e).__name__}: {str(e).splitlines()[0][:100]}]", flush=True)
        _empty_cache()
        return float("nan")


def _empty_cache():
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_case(table, kernel, impls, inputs, work_fwd, work_fb, unit, backward=True):
    """impls: ordered {name: callable}; the first must be 'reference' (the ratio baseline)."""
    modes = [("fwd", work_fwd)] + ([("fwd+bwd", work_fb)] if backward else [])
    for mode, work in modes:
        base = None
        for name, f in impls.items():
            if name == "compiled-ref" and NO_COMPILE:
                continue
            if mode == "fwd":
                def fn(f=f):
                    with torch.no_grad():
                        f()
            else:
                try:
                    fn = _fb(f, inputs)
                except Exception as e:
                    print(f"  [{name}: {type(e).__name__}: {str(e).splitlines()[0][:100]}]")
                    _empty_cache()
                    continue
            ms = _time(name, fn, inputs if mode != "fwd" else None)
            base = ms if base is None else base
            table.add(kernel, mode, name, ms, work, unit, base)
        _empty_cache()


def compile_check(arch: int = 90, dtypes=("bf16",)) -> int:
    """Compile each kernel (every autotune config, each dtype) to a cubin for ``sm_<arch>``
    with Triton's bundled ptxas: catches typing/constexpr/layout errors and shows the shared
    memory each config needs (H100/H200: 227 KiB per block), all without a GPU."""
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    mods = {m: importlib.import_module("training.kernels." + m) for m in
            ("rms_norm", "swiglu", "rope", "kv_int8", "flash_attention", "moe", "linear_ce")}
    floats = {"eps", "qk_scale", "sm_scale", "sign"}
    failed = 0

    def one(kernel, ptrs, consts, warps=4, stages=3):
        nonlocal failed
        fn = kernel.fn if hasattr(kernel, "configs") else kernel  # Autotuner wraps the JITFunction
        sig = {n: ("constexpr" if fn.params[i].is_constexpr else "*" + ptrs[n] if n in ptrs
                   else "fp32" if n in floats else "i32") for i, n in enumerate(fn.arg_names)}
        try:
            k = triton.compile(ASTSource(fn, sig, consts), target=GPUTarget("cuda", arch, 32),
                               options=dict(num_warps=warps, num_stages=stages))
            note = f"shared {k.metadata.shared / 1024:.0f} KiB"
            if k.metadata.shared > 227 * 1024:
                note += " (too much for one SM: autotune skips it)"
        except Exception as e:  # noqa: BLE001 - report every failing kernel, then exit 1
            failed += 1
            note = f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:150]}"
        cfg = ", ".join(f"{a}={b}" for a, b in consts.items())
        print(f"{fn.__name__:<12} w{warps} s{stages}  {cfg}: {note}", flush=True)

    def tuned(kernel, ptrs, flags):
        for c in kernel.configs:
            one(kernel, ptrs, {**flags, **c.kwargs}, c.num_warps, c.num_stages)

    for dt in dtypes:
        def P(*names, **kw):
            return {**{n: dt for n in names}, **kw}
        prec = "ieee" if dt == "fp32" else "tf32"
        rn, sw, ro, kv = mods["rms_norm"], mods["swiglu"], mods["rope"], mods["kv_int8"]
        fa, mo, lc = mods["flash_attention"], mods["moe"], mods["linear_ce"]
        one(rn._fwd, P("X", "W", "Y", RSTD="fp32"), dict(BLOCK_N=2048, ROWS=2), 8)
        one(rn._bwd, P("X", "W", "DY", "DX", DW="fp32", RSTD="fp32"),
            dict(BLOCK_N=2048, ROWS=2, TILES=8), 16)
        one(sw._fwd, P("G", "U", "Y"), dict(BLOCK=1024))
        one(sw._bwd, P("G", "U", "DY", "DG", "DU"), dict(BLOCK=1024))
        one(ro._rope, P("X", "Y", COS="fp32", SIN="fp32"), dict(BLOCK_H=64, ROWS=32))
        one(kv._quant, P("X", Q="i8", S="fp32"), dict(BLOCK_D=128, ROWS=16))
        one(kv._dequant, P("Y", Q="i8", S="fp32"), dict(BLOCK_D=128, ROWS=16))
        for causal, win, doc in ((True, False, False), (True, True, True), (False, False, False)):
            flags = dict(CAUSAL=causal, HAS_WINDOW=win, HAS_DOC=doc, BLOCK_D=128, PREC=prec)
            tuned(fa._fwd, P("Q", "K", "V", "O", LSE="fp32", DOC="i32"), flags)
            tuned(fa._bwd_dkdv, P("Q", "K", "V", "DO", "DK", "DV", LSE="fp32", DELTA="fp32",
                                  DOC="i32"), flags)
            tuned(fa._bwd_dq, P("Q", "K", "V", "DO", "DQ", LSE="fp32", DELTA="fp32", DOC="i32"),
                  flags)
        for g in (True, False):
            one(mo._gmm, P("A", "B", "C", A_IDX="i32", TILE_E="i32", TILE_R0="i32",
                           TILE_END="i32"), dict(GATHER=g, PREC=prec, BM=64, BN=128, BK=64))
            one(mo._gmm_wgrad, P("X", "DY", "DW", X_IDX="i32", SEG_START="i32", SEG_END="i32"),
                dict(GATHER=g, PREC=prec, BM=32, BN=128, BK=64))
            one(mo._combine, P("Y", "W", "OUT", POS="i32"), dict(HAS_W=g, ROWS=2, BLOCK_D=1024))
        one(lc._lse_update, P("LOGITS", M="fp32", S="fp32", TGT="i32", TLOGIT="fp32"),
            dict(ROWS=4, BLOCK_V=1024))
        one(lc._ce_grad, P("LOGITS", LSE="fp32", TGT="i32", SCALE="fp32"),
            dict(ROWS=4, BLOCK_V=1024))
    print("compile check:", "all kernels compiled" if not failed else f"{failed} FAILED")
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma list: rms_norm,rope,swiglu,attention,"
                    "attention_window,moe,linear_ce,kv_int8")
    ap.add_argument("--quick", action="store_true", help="4x fewer tokens")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile peers")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--compile-check", action="store_true",
                    help="no GPU needed: compile every kernel config for sm_90 and exit")
    ap.add_argument("--fp32", action="store_true",
                    help="with --compile-check: fp32 kernels too (ptxas takes minutes)")
    args = ap.parse_args(argv)
    if args.compile_check:
        return compile_check(dtypes=("bf16", "fp32") if args.fp32 else ("bf16",))
    global SMOKE, NO_COMPILE
    SMOKE, NO_COMPILE = args.smoke, args.no_compile
    if not SMOKE and not torch.cuda.is_available():
        print("bench/kernels.py: no CUDA GPU here; the Triton kernels are only timed on a GPU "
              "(H100/H200). Nothing measured.")
        return 0

    from training.kernels import reference as ref
    from training.kernels import flash_attention, kv_int8, linear_ce, moe, rms_norm, rope, swiglu

    torch.manual_seed(0)
    dev, bf = ("cpu" if SMOKE else "cuda"), torch.bfloat16
    only = set(filter(None, args.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    comp = (lambda f: f) if args.no_compile else (lambda f: torch.compile(f, dynamic=False))
    B, T = (1, 4096) if args.quick else (4, 4096)
    d, H, Hkv, D, F, V = 2048, 16, 2, 128, 6656, 153600
    if SMOKE:
        B, T, d, H, Hkv, D, F, V = 1, 64, 64, 4, 2, 32, 96, 500
    N = B * T
    el = 2  # bytes per bf16 element
    gpu = "CPU smoke run (not a measurement)" if SMOKE else torch.cuda.get_device_name()
    print(f"{gpu}  torch {torch.__version__}  tokens/step {N}  bf16")
    print(f"{'kernel':<22}{'mode':<9}{'impl':<18}{'ms':>10}{'vs ref':>11}{'rate':>11}")
    t = Table()
    start = None if SMOKE else _start_conditions()

    def rq(*s, scale=1.0):
        return (torch.randn(*s, device=dev) * scale).to(bf).requires_grad_()

    if want("rms_norm"):
        x, w = rq(N, d), rq(d)
        io = 2 * N * d * el
        run_case(t, "rms_norm", {"reference": lambda: ref.rms_norm(x, w, 1e-6),
                                 "compiled-ref": comp(lambda: ref.rms_norm(x, w, 1e-6)),
                                 "triton": lambda: rms_norm.rms_norm(x, w, 1e-6)},
                 [x, w], io, io + 3 * N * d * el, "GB/s")
    if want("rope"):
        q, k = rq(B, H, T, D), rq(B, Hkv, T, D)
        cos, sin = ref.rope_cos_sin(T, D, 500000.0, device=dev)
        io = 2 * (q.numel() + k.numel()) * el
        run_case(t, "rope", {"reference": lambda: ref.apply_rope(q, k, cos, sin),
                             "compiled-ref": comp(lambda: ref.apply_rope(q, k, cos, sin)),
                             "triton": lambda: rope.apply_rope(q, k, cos, sin)},
                 [q, k], io, 2 * io, "GB/s")
    if want("swiglu"):
        g, u = rq(N, F), rq(N, F)
        io = 3 * N * F * el
        run_case(t, "swiglu", {"reference": lambda: ref.swiglu(g, u),
                               "compiled-ref": comp(lambda: ref.swiglu(g, u)),
                               "triton": lambda: swiglu.swiglu(g, u)},
                 [g, u], io, io + 5 * N * F * el, "GB/s")
    for name, window in (("attention", None), ("attention_window", 1024)):
        if not want(name):
            continue
        import torch.nn.functional as Fn
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        q, k, v = rq(B, H, T, D), rq(B, Hkv, T, D), rq(B, Hkv, T, D)
        vis = T * (T + 1) / 2 if window is None else sum(min(i + 1, window) for i in range(T))
        flops = 4 * B * H * vis * D

        def causal_mod(b, h, qi, ki):
            return qi >= ki

        def window_mod(b, h, qi, ki):
            return (qi >= ki) & (qi - ki < window)
        mod = causal_mod if window is None else window_mod
        bm = create_block_mask(mod, None, None, T, T, device=dev)
        flex = flex_attention if args.no_compile else torch.compile(flex_attention, dynamic=False)
        dense_mask = ref.attention_mask(T, T, True, window, device=dev) if window else None
        sdpa = (lambda: Fn.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)) \
            if window is None else \
            (lambda: Fn.scaled_dot_product_attention(q, k, v, attn_mask=dense_mask, enable_gqa=True))
        run_case(t, name, {"reference": lambda: ref.attention(q, k, v, True, window),
                           "compiled-ref": comp(lambda: ref.attention(q, k, v, True, window)),
                           "sdpa": sdpa,
                           "flex_attention": lambda: flex(q, k, v, block_mask=bm, enable_gqa=True),
                           "triton": lambda: flash_attention.attention(q, k, v, True, window)},
                 [q, k, v], flops, 3.5 * flops, "TFLOP/s")  # backward = 2.5x forward
    if want("moe"):
        E, topk, fe, dm = (16, 2, 1024, d) if not SMOKE else (4, 2, 48, d)
        x = rq(N, dm)
        logits = torch.randn(N, E, device=dev)
        wts, idx = torch.softmax(logits, -1).topk(topk, -1)
        wts = wts.to(bf).requires_grad_()
        wg, wu, wd = rq(E, dm, fe, scale=0.02), rq(E, dm, fe, scale=0.02), rq(E, fe, dm, scale=0.02)
        flops = 2 * N * topk * 3 * dm * fe
        run_case(t, "moe_mlp", {"reference": lambda: ref.moe_mlp(x, idx, wts, wg, wu, wd),
                                "compiled-ref": comp(lambda: ref.moe_mlp(x, idx, wts, wg, wu, wd)),
                                "triton": lambda: moe.moe_mlp(x, idx, wts, wg, wu, wd)},
                 [x, wts, wg, wu, wd], flops, 3 * flops, "TFLOP/s")
    if want("linear_ce"):
        n = N // 2
        h, W = rq(n, d), rq(V, d, scale=0.02)
        tg = torch.randint(0, V, (n,), device=dev)
        flops = 2 * n * V * d

        def lce_fwd_only():  # forward without grads: no second pass
            return linear_ce.linear_cross_entropy(h, W, tg)
        run_case(t, "linear_ce", {"reference": lambda: ref.linear_cross_entropy(h, W, tg),
                                  "compiled-ref": comp(lambda: ref.linear_cross_entropy(h, W, tg)),
                                  "triton": lce_fwd_only},
                 [h, W], flops, 3 * flops, "TFLOP/s")
        for nm, f in (("reference", lambda: ref.linear_cross_entropy(h, W, tg)),
                      ("triton", lambda: linear_ce.linear_cross_entropy(h, W, tg))):
            if SMOKE:
                break
            if nm == "reference":
                print("  linear_ce peak memory, fwd+bwd (GiB): ", end="")
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            f().backward()
            h.grad = W.grad = None
            print(f"{nm} {(torch.cuda.max_memory_allocated() - base) / 2**30:.2f}  ", end="",
                  flush=True)
        print()
    if want("kv_int8"):
        x = torch.randn(B * 2, Hkv, T, D, device=dev).to(bf)
        qx, sx = kv_int8.quantize_kv_int8(x)
        io_q = x.numel() * (el + 1) + sx.numel() * 4
        run_case(t, "kv_quantize", {"reference": lambda: ref.quantize_kv_int8(x),
                                    "compiled-ref": comp(lambda: ref.quantize_kv_int8(x)),
                                    "triton": lambda: kv_int8.quantize_kv_int8(x)},
                 [], io_q, 0, "GB/s", backward=False)
        run_case(t, "kv_dequantize", {"reference": lambda: ref.dequantize_kv_int8(qx, sx, bf),
                                      "compiled-ref": comp(lambda: ref.dequantize_kv_int8(qx, sx, bf)),
                                      "triton": lambda: kv_int8.dequantize_kv_int8(qx, sx, bf)},
                 [], io_q, 0, "GB/s", backward=False)
    if not SMOKE:  # a smoke run on CPU is a wiring check, never a figure to keep
        _save(t, gpu, N, start)
    return 0


def _start_conditions():
    from bench.results import start_conditions
    return start_conditions()


def _save(t: Table, gpu: str, tokens: int, start) -> None:
    """bench/results/kernels.json: every timed row; the headline is Triton's speed-up over eager."""
    from bench.results import save_result
    rows = [dict(zip(("kernel", "mode", "impl", "ms", "vs_reference", "rate", "unit"), r)) for r in t.rows]
    headline = [{"what": f"{r['kernel']} {r['mode']} Triton vs eager ({gpu})",
                 "figure": f"{r['vs_reference']:.2f}x", "target": "> 1x"}
                for r in rows if r["impl"] == "triton" and r["vs_reference"] == r["vs_reference"]]
    save_result("kernels", {"gpu": gpu, "tokens_per_step": tokens, "rows": rows, "headline": headline,
                            "not_covered": "bf16 only; shapes of ondevice-3b at the stated tokens per step"},
                packages=["torch", "triton"], start=start)


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(
        __import__("os").path.abspath(__file__))))
    sys.exit(main())
