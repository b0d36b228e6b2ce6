"""Small helpers shared by the Triton kernels (interpreter detection, autotune configs, dtypes)."""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


def configs(gpu: list[dict], interp: dict, num_warps: int = 4, num_stages: int = 2):
    """Autotune configs: the GPU list normally, ONE config under the interpreter (DESIGN.md)."""
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


# Triton 3.8's interpreter runs tl.dot on bf16 as np.matmul over the raw uint16 bits (garbage), so
# under the interpreter dots upcast to fp32 first: bf16 x bf16 products are exact in fp32, which is
# what tensor cores compute too. On a GPU the branch is pruned at compile time.
UPCAST_DOTS = tl.constexpr(INTERPRET)


@triton.jit
def mma(a, b, acc, PREC: tl.constexpr):
    """``acc + a @ b`` with float32 accumulation."""
    if UPCAST_DOTS:
        out = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        out = tl.dot(a, b, acc, input_precision=PREC)
    return out
