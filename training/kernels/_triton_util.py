"""Small helpers shared by the Triton kernels (interpreter detection, autotune configs, dtypes)."""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


def configs(gpu: list[dict], interp: dict, num_warps: int = 4, num_stages: int = 2):
    """Autotune configs: the GPU list normally, ONE config under the interpreter, where several configs fail."""
    if INTERPRET:
        return [triton.Config(interp, num_warps=1, num_stages=1)]
    out = []
    for c in gpu:
        c = dict(c)
        w = c.pop("num_warps", num_warps)
        s = c.pop("num_stages", num_stages)
        out.append(triton.Config(c, num_warps=w, num_stages=s))
    return out


def dot_precision(dtype: torch.dtype) -> str:
    """fp32 inputs get exact fp32 dots (tests compare at fp32 tolerance); 16-bit ones use tensor cores."""
    return "ieee" if dtype == torch.float32 else "tf32"


def pow2(n: int, lo: int = 16) -> int:
    return max(lo, triton.next_power_of_2(n))


def device_fn(fn):
    """``triton.jit`` on a GPU; under the interpreter a plain Python helper, because the
    interpreter re-patches triton.language on every device-function call (a large share of the
    run time); the kernel calling it has already patched it."""
    return fn if INTERPRET else triton.jit(fn)


if INTERPRET:
    # The interpreter checks every int32 add/mul for overflow by redoing it in int64 (about a
    # third of the run time of the kernels here); switch that debugging aid off for speed.
    try:
        import dataclasses

        from triton.runtime import interpreter as _interp
        _interp.interpreter_builder.options = dataclasses.replace(
            _interp.interpreter_builder.options, sanitize_overflow=False)
    except (ImportError, AttributeError, TypeError):  # internals moved: just slower
        pass


# Triton 3.8's interpreter runs tl.dot on bf16 as np.matmul over the raw uint16 bits (garbage), so
# under the interpreter dots upcast to fp32 first: bf16 x bf16 products are exact in fp32, which is
# what tensor cores compute too.
def _mma_interp(a, b, acc, PREC):
    return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")


@triton.jit
def _mma_gpu(a, b, acc, PREC: tl.constexpr):
    return tl.dot(a, b, acc, input_precision=PREC)


mma = _mma_interp if INTERPRET else _mma_gpu  # acc + a @ b, float32 accumulation
