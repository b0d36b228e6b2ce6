"""Vision encoder, adapter and image tokens in the language models (real modules, small shapes)."""
import dataclasses

import pytest
import torch

from training.models import build_model, get_preset
from training.vision.adapter import VLAdapter
from training.vision.config import ablation, get_vision_preset
from training.vision.encoder import VisionEncoder, image_to_windows, windows_to_image
from training.vision.vlm import VisionLanguageModel

CFG = dataclasses.replace(get_vision_preset("vitdet-tiny"), image_size=32, patch_size=4, width=32, heads=2,
                          mlp_hidden=48, depth=3, window=4, global_blocks=(1,), registers=2)   # 8x8 grid, 4 windows


def _window_of_patch(cfg):
    """Window index of every patch (row-major patch order)."""
    g, w = cfg.grid, cfg.window_side
    return torch.tensor([(r // w) * (g // w) + (c // w) for r in range(g) for c in range(g)])


def _cross_window_grad(cfg, src_window=0, dst_window=3):
    """|d patches(dst window) / d pixels(src window)| summed, through the whole encoder (windows
    as CFG lays them out, also for the plain ViT)."""
    torch.manual_seed(0)
    enc = VisionEncoder(cfg)
    img = torch.randn(1, 3, cfg.image_size, cfg.image_size, requires_grad=True)
    feats = enc(img)
    win = _window_of_patch(CFG)
    feats[0, win == dst_window].sum().backward()
    p, g = cfg.patch_size, cfg.grid
    grad = img.grad[0].abs().sum(0)                       # [S, S]
    per_patch = grad.view(g, p, g, p).sum((1, 3)).flatten()
    return per_patch[win == src_window].sum().item(), per_patch[win == dst_window].sum().item()


def test_window_layout_round_trips():
    x = torch.randn(2, CFG.grid, CFG.grid, 5)
    w = image_to_windows(x, CFG)
    assert w.shape == (2 * CFG.n_windows, 16, 5)
    assert torch.equal(windows_to_image(w, 2, CFG), x.reshape(2, -1, 5))


def test_rw_off_windows_exchange_nothing_rw_on_they_do():
    cross_off, own_off = _cross_window_grad(ablation(CFG, "rw-off"))
    cross_on, own_on = _cross_window_grad(CFG)
    assert own_off > 0 and own_on > 0
    assert cross_off == 0.0                              # isolated windows: exactly no gradient
    assert cross_on > 1e-6 * own_on                       # registers carry context across windows
    cross_plain, _ = _cross_window_grad(ablation(CFG, "plain"))
    assert cross_plain > 0


def test_global_rw_block_mixes_windows_only_through_registers():
    """One global block: patch outputs depend on other windows not at all; registers do."""
    torch.manual_seed(0)
    enc = VisionEncoder(CFG)
    blk = enc.blocks[1]
    assert blk.is_global
    R, nW = CFG.registers, CFG.n_windows
    x = torch.randn(nW, R + 16, CFG.width, requires_grad=True)   # window layout, B = 1
    out = blk(x, 1)
    # patches of window 3 <- anything in window 0: zero
    (gp,) = torch.autograd.grad(out[3, R:].sum(), x, retain_graph=True)
    assert gp[0].abs().sum() == 0 and gp[3].abs().sum() > 0
    # registers of window 3 <- registers of window 0: non-zero; <- patches of window 0: zero
    # (a window's patches reach its own registers first, other windows one block later)
    (gr,) = torch.autograd.grad(out[3, :R].sum(), x)
    assert gr[0, :R].abs().sum() > 0 and gr[0, R:].abs().sum() == 0 and gr[3, R:].abs().sum() > 0


@pytest.mark.parametrize("preset", ["tiny", "ondevice-tiny", "ptmoe-tiny"])
def test_text_only_batch_same_logits_with_or_without_vision(preset):
    cfg = dataclasses.replace(get_preset(preset), vocab_size=128, max_seq_len=64)
    torch.manual_seed(3)
    lm_alone = build_model(cfg).eval()
    torch.manual_seed(3)
    lm = build_model(cfg)
    vlm = VisionLanguageModel(lm, VisionEncoder(CFG), VLAdapter(CFG, cfg.d_model, 4)).eval()
    ids = torch.randint(0, 100, (2, 20))
    doc = torch.tensor([[0] * 12 + [1] * 8, [0] * 20])
    with torch.no_grad():
        a = lm_alone(ids, doc_ids=doc).logits
        b = vlm(ids, doc_ids=doc).logits
    assert torch.equal(a, b)


def test_placeholders_replaced_and_masked_out_of_loss():
    cfg = dataclasses.replace(get_preset("tiny"), vocab_size=128, max_seq_len=32, d_model=32, n_heads=2,
                              n_kv_heads=1, n_layers=1, ffn_hidden=64)
    torch.manual_seed(0)
    vlm = VisionLanguageModel(build_model(cfg), VisionEncoder(CFG), VLAdapter(CFG, cfg.d_model, 4))
    ph = vlm.image_token_id
    assert ph == 127
    ids = torch.tensor([[5] + [ph] * 4 + [7, 8, 9, 10, 2], [ph] * 4 + [11, 12, 13, 2, 2, 2]])
    targets = torch.cat([ids[:, 1:], torch.full((2, 1), -100)], 1)
    images = torch.randn(2, 3, 32, 32)
    out = vlm(ids, targets=targets, images=images, return_logits=True)
    keep = (targets != ph) & (targets != -100)
    want = torch.nn.functional.cross_entropy(out.logits[keep], targets[keep])
    assert torch.allclose(out.loss, want, atol=1e-6)
    assert (targets == ph).sum() == 7                    # there were placeholder targets to mask
    # the image changes the text logits (its tokens were spliced in) ...
    out2 = vlm(ids, targets=targets, images=images.flip(-1), return_logits=True)
    assert not torch.allclose(out.logits[0, 5:], out2.logits[0, 5:])
    # ... and a count mismatch is refused with a message
    with pytest.raises(ValueError, match="placeholders"):
        vlm(ids, images=images[:1])


def test_adapter_token_count_and_presets_sizes():
    a = VLAdapter(CFG, 48, 9)
    assert a(torch.randn(2, CFG.patch_tokens, CFG.width)).shape == (2, 9, 48)
    with pytest.raises(Exception, match="square"):
        VLAdapter(CFG, 48, 10)
    with torch.device("meta"):
        l_params = VisionEncoder(get_vision_preset("vitdet-l")).num_parameters()
        g_params = VisionEncoder(get_vision_preset("vit-g")).num_parameters()
    assert 280e6 < l_params < 330e6 and 0.95e9 < g_params < 1.1e9


def test_encoder_triton_kernels_match_reference():
    """The encoder's norms, SwiGLU and window attention through training/kernels' Triton kernels
    (interpreted on CPU) give the reference's features and gradients."""
    small = dataclasses.replace(CFG, image_size=16, patch_size=4, window=2, depth=2, global_blocks=(1,))
    img = torch.randn(1, 3, 16, 16)
    outs = []
    for impl in ("reference", "triton"):
        torch.manual_seed(0)
        enc = VisionEncoder(dataclasses.replace(small, kernels=impl))
        x = img.clone().requires_grad_(True)
        f = enc(x)
        f.square().sum().backward()
        outs.append((f.detach(), x.grad))
    assert torch.allclose(outs[0][0], outs[1][0], atol=1e-4, rtol=1e-4)
    assert torch.allclose(outs[0][1], outs[1][1], atol=1e-4, rtol=1e-3)
