"""ViTDet-style image encoder with Register-Window (RW), readable top to bottom.

    image [B,3,S,S] -> patch_embed (conv, stride p) -> + absolute learned position per patch
    -> split the g x g patch grid into windows of w x w patches; each window gets R registers
       (learned register vectors + a learned per-window embedding), placed before its patches
    -> blocks 0..depth-1 (pre-norm attention + SwiGLU):
         windowed block: every token attends to the tokens of its own window (registers included)
         global block:   see below
    -> final RMSNorm -> patch features [B, g*g, width] (row-major), registers [B, nW*R, width]

Register-Window, precisely. Windows never attend to each other's patches. At a global block a
window's *patch* queries still see only their own window (its R registers and its patches), while
its *register* queries see their own window's patches plus the registers of every window. So one
global block carries context window -> registers -> other registers, and the next block (any
block) hands it from a window's registers to its patches. Windows exchange information only
through registers; with ``registers=0`` (RW off) global blocks act as windowed blocks and windows
exchange nothing, unless ``full_global`` restores ViTDet's plain global attention over all
patches. ``window=0`` is a plain ViT (one window covering the grid, global attention everywhere).

Positions are absolute (learned, one per patch, fixed grid: images are resized to ``image_size``
by the loader's letterbox policy). RMSNorm, SwiGLU and attention go through training.kernels.ops
(Triton on CUDA, eager reference on CPU); the register queries of global blocks use torch's SDPA.
"""
from __future__ import annotations

import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

from training.kernels import ops
from training.models.layers import RMSNorm
from training.vision.config import VisionConfig


class Attention(nn.Module):
    def __init__(self, cfg: VisionConfig):
        super().__init__()
        self.heads, self.impl = cfg.heads, cfg.kernels
        self.qkv = nn.Linear(cfg.width, 3 * cfg.width)
        self.proj = nn.Linear(cfg.width, cfg.width)

    def split(self, x):
        """[N, L, D] -> q, k, v each [N, H, L, D/H]."""
        N, L, D = x.shape
        qkv = self.qkv(x).view(N, L, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        return qkv[0], qkv[1], qkv[2]

    def merge(self, o):
        N, H, L, d = o.shape
        return self.proj(o.transpose(1, 2).reshape(N, L, H * d))

    def windowed(self, x):
        """x [N, L, D]: full attention inside each of the N windows."""
        q, k, v = self.split(x)
        return self.merge(ops.attention(q, k, v, causal=False, impl=self.impl))

    def register_window(self, x, n_windows: int, R: int):
        """x [B*nW, R+P, D], registers first. Patches: own window. Registers: own window's
        patches + all registers of the image."""
        BW, L, D = x.shape
        B = BW // n_windows
        q, k, v = self.split(x)                                  # [B*nW, H, L, d]
        out = ops.attention(q, k, v, causal=False, impl=self.impl)
        H, d = q.shape[1], q.shape[3]

        def all_regs(t):                                         # [B*nW, H, nW*R, d]: every window's registers
            r = t[:, :, :R].reshape(B, n_windows, H, R, d).permute(0, 2, 1, 3, 4).reshape(B, H, n_windows * R, d)
            return r.unsqueeze(1).expand(B, n_windows, H, n_windows * R, d).reshape(BW, H, n_windows * R, d)

        k_r = torch.cat([k[:, :, R:], all_regs(k)], dim=2)
        v_r = torch.cat([v[:, :, R:], all_regs(v)], dim=2)
        reg_out = F.scaled_dot_product_attention(q[:, :, :R], k_r, v_r)
        out = torch.cat([reg_out.to(out.dtype), out[:, :, R:]], dim=2)
        return self.merge(out)


class SwiGLU(nn.Module):
    def __init__(self, cfg: VisionConfig):
        super().__init__()
        self.w_gate = nn.Linear(cfg.width, cfg.mlp_hidden, bias=False)
        self.w_up = nn.Linear(cfg.width, cfg.mlp_hidden, bias=False)
        self.w_down = nn.Linear(cfg.mlp_hidden, cfg.width, bias=False)
        self.impl = cfg.kernels

    def forward(self, x):
        return self.w_down(ops.swiglu(self.w_gate(x), self.w_up(x), impl=self.impl))


class Block(nn.Module):
    def __init__(self, cfg: VisionConfig, index: int):
        super().__init__()
        self.cfg, self.is_global = cfg, index in cfg.global_blocks
        self.attn_norm = RMSNorm(cfg.width, cfg.norm_eps, cfg.kernels)
        self.attn = Attention(cfg)
        self.mlp_norm = RMSNorm(cfg.width, cfg.norm_eps, cfg.kernels)
        self.mlp = SwiGLU(cfg)

    def forward(self, x, B: int):
        """x [B*nW, R+P, D] in window layout."""
        c = self.cfg
        h = self.attn_norm(x)
        if self.is_global and c.registers:
            a = self.attn.register_window(h, c.n_windows, c.registers)
        elif self.is_global and c.full_global and c.n_windows > 1:
            a = self.attn.windowed(windows_to_image(h, B, c)).reshape(B, c.grid, c.grid, -1)
            a = image_to_windows(a, c)
        else:
            a = self.attn.windowed(h)
        x = x + a
        return x + self.mlp(self.mlp_norm(x))


def image_to_windows(x, cfg: VisionConfig):
    """[B, g, g, D] -> [B*nW, w*w, D] (windows row-major, patches row-major inside)."""
    B, g, _, D = x.shape
    w = cfg.window_side
    n = g // w
    return x.view(B, n, w, n, w, D).permute(0, 1, 3, 2, 4, 5).reshape(B * n * n, w * w, D)


def windows_to_image(x, B: int, cfg: VisionConfig):
    """[B*nW, w*w, D] -> [B, g*g, D] (row-major patch order)."""
    w, g = cfg.window_side, cfg.grid
    n = g // w
    D = x.shape[-1]
    return x.view(B, n, n, w, w, D).permute(0, 1, 3, 2, 4, 5).reshape(B, g * g, D)


def init_by_name(module: nn.Module, seed: int, std_of) -> None:
    """Norm weights 1, biases 0, other parameters Normal(0, std_of(name)) from a generator seeded
    by ``seed`` and the parameter's name (so the same names get the same values)."""
    for name, p in module.named_parameters():
        if p.is_meta:
            continue
        with torch.no_grad():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                g = torch.Generator(device=p.device)
                g.manual_seed(seed ^ zlib.crc32(name.encode()))
                p.normal_(0.0, std_of(name), generator=g)


class VisionEncoder(nn.Module):
    def __init__(self, cfg: VisionConfig):
        super().__init__()
        self.config = cfg
        self._init_seed = int(torch.randint(0, 2**62, (1,), device="cpu").item())
        self.patch_embed = nn.Conv2d(3, cfg.width, cfg.patch_size, stride=cfg.patch_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, cfg.grid, cfg.grid, cfg.width))
        if cfg.registers:
            self.register_tokens = nn.Parameter(torch.zeros(cfg.registers, cfg.width))
            self.window_embed = nn.Parameter(torch.zeros(cfg.n_windows, 1, cfg.width))
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.depth))
        self.norm = RMSNorm(cfg.width, cfg.norm_eps, cfg.kernels)
        self.init_weights()

    def init_weights(self) -> None:
        """Normal(0, init_std) for weights (output projections / sqrt(2 * depth)), zeros for
        biases, ones for norms; deterministic per parameter name."""
        c = self.config
        init_by_name(self, self._init_seed, lambda n: c.init_std / ((2 * c.depth) ** 0.5 if n.endswith(
            ("proj.weight", "w_down.weight")) else 1))

    def embed(self, images):
        """[B,3,S,S] -> tokens in window layout [B*nW, R+P, D]."""
        c = self.config
        if images.dim() != 4 or images.shape[1:] != (3, c.image_size, c.image_size):
            raise ValueError(f"{c.name} wants images [B, 3, {c.image_size}, {c.image_size}], got {tuple(images.shape)}")
        B = images.shape[0]
        x = self.patch_embed(images).permute(0, 2, 3, 1) + self.pos_embed     # [B, g, g, D]
        x = image_to_windows(x, c)
        if c.registers:
            regs = (self.register_tokens.unsqueeze(0) + self.window_embed).unsqueeze(0)  # [1, nW, R, D]
            regs = regs.expand(B, -1, -1, -1).reshape(B * c.n_windows, c.registers, -1)
            x = torch.cat([regs.to(x.dtype), x], dim=1)
        return x

    def forward(self, images, return_registers: bool = False):
        """Patch features [B, g*g, width] (and the registers [B, nW*R, width] when asked)."""
        c = self.config
        B = images.shape[0]
        x = self.embed(images)
        for blk in self.blocks:
            x = blk(x, B)
        x = self.norm(x)
        R = c.registers
        patches = windows_to_image(x[:, R:], B, c)
        if not return_registers:
            return patches
        return patches, x[:, :R].reshape(B, c.n_windows * R, c.width)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_encoder(cfg: VisionConfig) -> VisionEncoder:
    return VisionEncoder(cfg)
