"""Distributed training under torchrun: data parallel (DDP, or FSDP2 `fully_shard` on CUDA) and
track parallelism for PT-MoE.

Track parallel (`train.parallel: tracks`): rank r of W holds tracks {t : t % W == r}... precisely
the contiguous slice `tracks_for_rank` below; every rank reads the SAME batches; the tracks meet
once per track-block boundary with one all-reduce (the model's `sync_tracks`), L/D per forward.
Embedding, final norm and head are replicated and get identical gradients on every rank.
Data parallel (`ddp`/`fsdp`): rank r reads sequences g with g % W == r (PackedLoader).
Checkpoints: rank 0 writes the full model (track shards gathered), each rank its optimiser state.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from corpus.errors import ConfigError

MODES = ("none", "ddp", "fsdp", "tracks")


@dataclass
class DistContext:
    mode: str = "none"
    rank: int = 0
    world: int = 1
    group: object | None = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def data_rank(self) -> tuple[int, int]:
        """(rank, world) the loader splits by: tracks-parallel ranks all read the same data."""
        return (self.rank, self.world) if self.mode in ("ddp", "fsdp") else (0, 1)


def init_distributed(mode: str, device: torch.device) -> DistContext:
    if mode not in MODES:
        raise ConfigError(f"train.parallel must be one of {', '.join(MODES)}, got {mode!r}")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if mode == "none":
        if world > 1:
            raise ConfigError("launched with torchrun (WORLD_SIZE > 1) but train.parallel is none")
        return DistContext()
    if not dist.is_initialized():
        if "RANK" not in os.environ:
            raise ConfigError(f"train.parallel={mode} needs torchrun (e.g. torchrun --nproc_per_node=2 "
                              "$(which cidermill) train --config ...)")
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return DistContext(mode, dist.get_rank(), dist.get_world_size(), dist.group.WORLD)


def tracks_for_rank(n_tracks: int, rank: int, world: int) -> tuple[int, ...]:
    if n_tracks % world:
        raise ConfigError(f"track parallelism needs world size ({world}) to divide n_tracks ({n_tracks})")
    per = n_tracks // world
    return tuple(range(rank * per, (rank + 1) * per))


def is_track_param(name: str) -> bool:
    return name.startswith("tracks.") or ".tracks." in name


def clip_grad_norm(model, max_norm: float, ctx: DistContext) -> torch.Tensor:
    """Global gradient norm (track-sharded params summed over ranks), then clip."""
    params = [(n, p) for n, p in model.named_parameters() if p.grad is not None]
    if ctx.mode != "tracks":
        return torch.nn.utils.clip_grad_norm_([p for _, p in params], max_norm or float("inf"))
    rep = sum((p.grad.float().pow(2).sum() for n, p in params if not is_track_param(n)), torch.zeros(()))
    loc = sum((p.grad.float().pow(2).sum() for n, p in params if is_track_param(n)), torch.zeros(()))
    loc = loc.to(params[0][1].device)
    dist.all_reduce(loc, group=ctx.group)
    total = (rep.to(loc.device) + loc).sqrt()
    if max_norm and torch.isfinite(total) and total > max_norm:
        scale = max_norm / (total + 1e-6)
        for _, p in params:
            p.grad.mul_(scale)
    return total


def mean_over_ranks(value: float, ctx: DistContext) -> float:
    if ctx.mode in ("ddp", "fsdp"):
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t, group=ctx.group)
        return float(t.item()) / ctx.world
    return value


def sum_over_ranks(value: float, ctx: DistContext) -> float:
    if ctx.mode == "tracks":
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t, group=ctx.group)
        return float(t.item())
    return value


def full_state_dict(model, ctx: DistContext) -> dict[str, torch.Tensor] | None:
    """The complete model state on rank 0 (track shards gathered); None on other ranks."""
    inner = getattr(model, "module", model)
    sd = {k: v.detach().cpu() for k, v in inner.state_dict().items()}
    if ctx.mode != "tracks":
        return sd if ctx.is_main else None
    parts: list = [None] * ctx.world
    dist.all_gather_object(parts, {k: v for k, v in sd.items() if is_track_param(k)})
    if not ctx.is_main:
        return None
    for p in parts:
        sd.update(p)
    return sd


def wrap_data_parallel(model, ctx: DistContext, device: torch.device):
    if ctx.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415  (lazy: multi-process only)
        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    if ctx.mode == "fsdp":
        if device.type != "cuda":
            raise ConfigError("train.parallel=fsdp needs CUDA; use ddp on CPU")
        from torch.distributed.fsdp import fully_shard  # noqa: PLC0415  (lazy: multi-process only)
        for layer in getattr(model, "layers", []):
            fully_shard(layer)
        fully_shard(model)
        return model
    return model
