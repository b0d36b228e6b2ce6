"""Token-by-token decoding of one sequence, optionally under a grammar constraint.

A ``Session`` is one model with its KV cache; ``feed(ids)`` runs the new tokens and returns their
logits. ``Sampling`` turns logits (and the grammar's allowed set) into the distribution a token is
drawn from: the same function serves plain decoding and both sides of speculative decoding, so
"follows the target's distribution" means this distribution.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from inference.kv_rollback import rollback, savepoint


class Session:
    """One model, one sequence (batch 1), a KV cache of ``max_len`` positions."""

    def __init__(self, model, max_len: int, kv_int8: bool = False):
        self.model = model
        self.cache = model.allocate_kv_cache(1, max_len, kv_int8=kv_int8)
        self.forwards = 0

    @property
    def pos(self) -> int:
        return self.cache.pos

    @torch.no_grad()
    def feed(self, ids: list[int]) -> torch.Tensor:
        """Logits ``[len(ids), V]`` (float32) after each of the new tokens."""
        x = torch.tensor([ids], dtype=torch.long, device=self.cache_device)
        self.forwards += 1
        return self.model(x, cache=self.cache).logits[0].float()

    @torch.no_grad()
    def prefill(self, ids: list[int]) -> torch.Tensor:
        """Logits ``[V]`` after the last of ``ids`` only: the model may skip work whose outputs
        nobody reads (the on-device model runs its KV-sharing block 2 at the last position only)."""
        x = torch.tensor([ids], dtype=torch.long, device=self.cache_device)
        self.forwards += 1
        return self.model.prefill(x, self.cache)[0].float()

    @property
    def cache_device(self):
        return next(self.model.parameters()).device

    def savepoint(self, n: int):
        return savepoint(self.cache, n)

    def rollback(self, sp, keep: int) -> None:
        rollback(self.cache, sp, keep)


@dataclass
class Sampling:
    """temperature 0: greedy. Otherwise temperature, then top-p, over the allowed tokens only."""
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    generator: torch.Generator | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.temperature < 0 or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"temperature must be >= 0 and top_p in (0, 1], got {self.temperature}, {self.top_p}")
        if self.generator is None:
            self.generator = torch.Generator()
            self.generator.manual_seed(0 if self.seed is None else self.seed)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0

    def probs(self, logits: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
        """Distribution ``[V]`` (one-hot at the argmax when greedy)."""
        logits = logits.float()
        if allowed is not None:
            logits = logits.masked_fill(~allowed, float("-inf"))
        if self.greedy:
            return torch.nn.functional.one_hot(logits.argmax(), logits.shape[-1]).float()
        p = torch.softmax(logits / self.temperature, dim=-1)
        if self.top_p < 1.0:
            sorted_p, order = p.sort(descending=True)
            before = sorted_p.cumsum(-1) - sorted_p
            sorted_p = sorted_p.masked_fill(before >= self.top_p, 0.0)
            p = torch.zeros_like(p).scatter_(-1, order, sorted_p)
            p = p / p.sum()
        return p

    def draw(self, p: torch.Tensor) -> int:
        if self.greedy:
            return int(p.argmax())
        return int(torch.multinomial(p, 1, generator=self.generator))

    def uniform(self) -> float:
        return float(torch.rand((), generator=self.generator))


@dataclass
class DecodeStats:
    tokens: int = 0
    target_forwards: int = 0
    draft_forwards: int = 0
    drafted: int = 0
    accepted: int = 0
    mask_seconds: float = 0.0  # CPU seconds spent computing grammar masks
    seconds: float = 0.0
    finished: bool = False  # ended on EOS or a complete constrained value (not on the length limit)

    @property
    def acceptance(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0


def timed_allowed(constraint, stats: DecodeStats) -> torch.Tensor | None:
    if constraint is None:
        return None
    t = time.process_time()  # CPU time: what the mask costs, whatever else the machine runs
    a = constraint.allowed()
    stats.mask_seconds += time.process_time() - t
    return a


def decode_plain(target: Session, prompt: list[int], max_new: int, sampling: Sampling,
                 eos_id: int | None, constraint=None) -> tuple[list[int], DecodeStats]:
    """One token per target forward. Returns the new tokens (without a final EOS) and stats."""
    stats = DecodeStats()
    t0 = time.perf_counter()
    logits = target.prefill(prompt)
    out: list[int] = []
    while len(out) < max_new:
        if constraint is not None and constraint.finished:
            stats.finished = True
            break
        x = sampling.draw(sampling.probs(logits, timed_allowed(constraint, stats)))
        if x == eos_id:
            stats.finished = True
            break
        if constraint is not None:
            constraint.advance(x)
        out.append(x)
        if len(out) == max_new:
            stats.finished = constraint is not None and constraint.finished
            break
        logits = target.feed([x])[-1]
    stats.tokens, stats.target_forwards = len(out), target.forwards
    stats.seconds = time.perf_counter() - t0
    return out, stats
