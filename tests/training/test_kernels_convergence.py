"""Convergence: the same tiny model trained a few steps with Triton kernels and with the eager
references gives matching losses (TRITON_INTERPRET=1 on CPU, tests/conftest.py)."""
import dataclasses

import pytest
import torch

from training.models import build_model, get_preset


def _train(preset: str, impl: str, steps: int, B: int = 1, T: int = 16, **over) -> list[float]:
    torch.manual_seed(0)
    cfg = dataclasses.replace(get_preset(preset), kernels=impl, **over)
    model = build_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, cfg.vocab_size, (B, T + 1), generator=g)
    losses = []
    for _ in range(steps):
        out = model(data[:, :-1], targets=data[:, 1:])
        loss = out.loss + out.aux_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(out.loss.item())
    return losses


# tiny: RMSNorm, RoPE, GQA attention, SwiGLU, fused linear+CE. ptmoe-tiny cut to one track block
# of 4 layers (3 sliding-window + 1 global, MoE every other layer) adds the MoE kernels. The
# interpreter pays ~50 ms per kernel launch, hence batch 1 x 16 tokens and 3 steps.
@pytest.mark.slow
@pytest.mark.parametrize("preset,over", [("tiny", {}), ("ptmoe-tiny", {"n_layers": 4})],
                         ids=["tiny", "ptmoe-tiny"])
def test_triton_and_reference_train_alike(preset, over):
    steps = 3
    tri = _train(preset, "triton", steps, **over)
    ref = _train(preset, "reference", steps, **over)
    assert tri[-1] < tri[0], f"loss did not go down: {tri}"
    for a, b in zip(tri, ref):
        assert a == pytest.approx(b, rel=2e-3, abs=2e-3), (tri, ref)
