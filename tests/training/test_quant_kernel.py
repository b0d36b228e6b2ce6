"""2-bit dequantise-and-matmul: the Triton kernel (interpreter) against its eager reference, and the
reference against the packed file's own dequantisation."""
import pytest
import torch

from training.kernels import ops
from training.quant import grid
from training.quant.packed import pack


def _packed(n, k, group, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g)
    q = grid.quantize(w, 0.8, 2, group)
    return q, pack(q.codes, 2)


@pytest.mark.parametrize("m,n,k,group", [(5, 33, 64, 32), (1, 48, 96, 96), (17, 20, 128, 64)])
def test_dequant2_matmul_kernel_matches_reference(m, n, k, group):
    q, codes = _packed(n, k, group)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(1))
    y_ref = ops.dequant2_matmul(x, codes, q.step, group, impl="reference")
    y_tri = ops.dequant2_matmul(x, codes, q.step, group, impl="triton")
    torch.testing.assert_close(y_tri, y_ref, atol=1e-4, rtol=1e-4)
    # the reference is the packed weight's matmul
    torch.testing.assert_close(y_ref, x @ q.dequantize().t(), atol=1e-5, rtol=1e-5)
