"""Parallel-Track MoE: T small transformers (tracks) that meet only at track-block boundaries.

    x0 = tok_embeddings(tokens)
    for each track block b (layers b*D .. b*D+D-1):
        every track t runs its own D layers on x_b            (no communication inside a block)
        x_{b+1} = sync_tracks([h_0, ..., h_{T-1}]) = mean_t h_t
    logits = tied_head(norm(x_{L/D}))

Combining the tracks: the mean of their residual streams (every track keeps a full-width
``d_model`` stream; averaging keeps the scale of one stream). That is the only place tracks
interact: L/D synchronisation points per forward, against 2L for a tensor-parallel transformer
(one all-reduce after attention and one after the MLP of each layer).

Inside a track: MoE on every ``moe_every``-th layer with experts local to the track, and attention
interleaved as 3 sliding-window layers with RoPE then 1 global layer without positional embedding
(``global_every = 4``, ``nope_global``).

Track parallelism: ``PTMoETransformer(cfg, local_tracks=(2, 3), group=pg)`` holds only tracks 2
and 3 (parameter names ``tracks.2.*``, ``tracks.3.*`` as in the full model, and the same initial
values for the same global seed). Its ``sync_tracks`` sums the local streams and does ONE
``all_reduce(SUM)`` over ``group``, then divides by T: the other ranks in ``group`` must hold the
other tracks. Autograd: the all-reduce's backward is the identity, and the stream entering each
track block passes through an identity whose backward all-reduces the gradient (the Megatron f/g
pair), so every rank gets complete gradients. Embedding, final norm and head are replicated.
``out.aux_loss`` then covers the local tracks only.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn as nn

from training.models.base import LanguageModel
from training.models.config import ModelConfig
from training.models.block import TransformerLayer


class _AllReduceSum(torch.autograd.Function):
    """Forward: all-reduce(SUM) over ``group``. Backward: identity (the output is replicated)."""

    @staticmethod
    def forward(ctx, x, group):
        out = x.clone()
        dist.all_reduce(out, op=dist.ReduceOp.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _EnterTracks(torch.autograd.Function):
    """Forward: identity. Backward: all-reduce(SUM) of the gradient over ``group``, because the
    replicated stream feeds tracks that live on other ranks too."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=ctx.group)
        return grad, None


class TrackSync(nn.Module):
    """Combine the tracks' residual streams: ``sum(local streams) [all-reduced] / n_tracks``.

    A module (not a bare function) so tests and tools can count calls with a forward hook.
    """

    def __init__(self, n_tracks: int, group=None):
        super().__init__()
        self.n_tracks, self.group = n_tracks, group

    def forward(self, streams: list[torch.Tensor]) -> torch.Tensor:
        total = streams[0]
        for s in streams[1:]:
            total = total + s
        if self.group is not None:
            total = _AllReduceSum.apply(total, self.group)
        return total / self.n_tracks


class Track(nn.Module):
    """One track: ``n_layers`` transformer layers of width ``d_model`` with its own experts."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.layers = nn.ModuleList(TransformerLayer(cfg, i) for i in range(cfg.n_layers))


class PTMoETransformer(LanguageModel):
    def __init__(self, cfg: ModelConfig, local_tracks=None, group=None):
        super().__init__(cfg)
        local = tuple(range(cfg.n_tracks)) if local_tracks is None else tuple(sorted(set(local_tracks)))
        if not local or any(not 0 <= t < cfg.n_tracks for t in local):
            raise ValueError(f"local_tracks {local_tracks!r} must be a non-empty subset of "
                             f"0..{cfg.n_tracks - 1}")
        if len(local) < cfg.n_tracks and group is None:
            raise ValueError("a PT-MoE holding a subset of tracks needs the process group that "
                             "holds the others (group=...)")
        self.local_tracks = local
        self.group = group
        self.tracks = nn.ModuleDict({str(t): Track(cfg) for t in local})
        self.track_sync = TrackSync(cfg.n_tracks, group)
        self.init_weights()

    @property
    def n_blocks(self) -> int:
        return self.config.n_layers // self.config.track_block_depth

    def sync_tracks(self, streams: list[torch.Tensor]) -> torch.Tensor:
        """The one place tracks meet (one all-reduce when tracks are spread over ranks)."""
        return self.track_sync(streams)

    def backbone(self, x, rope, doc_ids, cache):
        D = self.config.track_block_depth
        aux = None
        for b in range(self.n_blocks):
            x_in = _EnterTracks.apply(x, self.group) if self.group is not None else x
            streams = []
            for t, track in self.tracks.items():
                h = x_in
                for i in range(b * D, (b + 1) * D):
                    h, _, a = track.layers[i](h, rope, doc_ids, cache.layer(f"{t}.{i}") if cache else None)
                    if a is not None:
                        aux = a if aux is None else aux + a
                streams.append(h)
            x = self.sync_tracks(streams)
        return x, aux

    def cache_specs(self) -> dict[str, int | None]:
        return {f"{t}.{i}": self.config.layer_window(i)
                for t in self.tracks for i in range(self.config.n_layers)}
