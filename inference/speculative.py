"""Speculative decoding: a small draft model proposes ``k`` tokens, the target checks them in one
forward and keeps the longest acceptable prefix plus one token of its own.

- Greedy: a drafted token is kept iff it is the target's argmax there, so the output is the
  target's own greedy output token for token.
- Sampled (Leviathan et al. 2023): keep drafted x with probability min(1, p(x)/q(x)); on the
  first rejection draw from normalise(max(0, p - q)). Every emitted token then follows the
  target's distribution p exactly, whatever the draft proposes.
- Under a grammar both p and q are the masked distributions: the draft only proposes allowed
  tokens, and each is judged against the target's distribution under the same mask. The masks
  computed while drafting are reused for verification; the grammar is rolled back with the caches.
- Both KV caches roll back on rejection (``kv_rollback``), ring buffers and int8 caches included.

Each session keeps the tokens it has not yet run (``pending``): the target always lacks the last
emitted token, the draft may lack two after a fully accepted round.
"""
from __future__ import annotations

import time

from inference.decode import DecodeStats, Sampling, Session, timed_allowed


def decode_speculative(target: Session, draft: Session, prompt: list[int], max_new: int, sampling: Sampling,
                       eos_id: int | None, constraint=None, k: int = 4) -> tuple[list[int], DecodeStats]:
    if k < 1:
        raise ValueError(f"speculative k must be >= 1, got {k}")
    stats = DecodeStats()
    t0 = time.perf_counter()
    out: list[int] = []
    # prefill all but the last prompt token; it is the first pending token of both
    if len(prompt) > 1:
        target.prefill(prompt[:-1])
        draft.prefill(prompt[:-1])
    t_pending, d_pending = [prompt[-1]], [prompt[-1]]

    def done(x: int) -> bool:
        return x == eos_id or (constraint is not None and constraint.finished)

    while len(out) < max_new and not (constraint is not None and constraint.finished):
        k_eff = min(k, max_new - len(out) - 1)
        d_sp = draft.savepoint(len(d_pending) + max(k_eff - 1, 0))
        xs, qs, masks, fed_x = _draft(draft, d_pending, k_eff, sampling, constraint, stats, eos_id)
        ended = bool(xs) and done(xs[-1])
        if not ended:
            masks.append(timed_allowed(constraint, stats))
        # verify: the target runs its pending token and all drafted ones at once
        t_sp = target.savepoint(len(t_pending) + len(xs))
        logits_t = target.feed(t_pending + xs)
        base = len(t_pending) - 1  # row of logits_t predicting xs[0]
        n, y = _accept(sampling, logits_t, base, xs, qs, masks)
        stats.drafted += len(xs)
        stats.accepted += n
        if constraint is not None:
            consumed = len(xs) - (1 if xs and xs[-1] == eos_id else 0)
            constraint.rollback(consumed - min(n, consumed))
        accepted = xs[:n]
        if y is None and not (n and done(accepted[-1])) and n == len(xs):
            y = sampling.draw(sampling.probs(logits_t[base + n], masks[n]))
        # caches keep what they ran of the accepted tokens; the rest becomes pending
        target.rollback(t_sp, len(t_pending) + n)
        keep_d = min(n, fed_x) if k_eff > 0 else 0
        draft.rollback(d_sp, len(d_pending) + keep_d if k_eff > 0 else 0)
        unfed = (accepted[keep_d:] if k_eff > 0 else d_pending)
        stop = _emit(out, accepted, y, eos_id, constraint)
        if stop or (constraint is not None and constraint.finished):
            stats.finished = True
            break
        t_pending = [out[-1]]
        d_pending = unfed + [out[-1]]
    out = out[:max_new]
    stats.tokens = len(out)
    stats.target_forwards, stats.draft_forwards = target.forwards, draft.forwards
    stats.seconds = time.perf_counter() - t0
    return out, stats



def _draft(draft: Session, pending: list[int], k_eff: int, sampling: Sampling, constraint, stats: DecodeStats,
           eos_id: int | None) -> tuple[list[int], list, list, int]:
    """Up to `k_eff` tokens the draft proposes, stopping after EOS or when the grammar finishes:
    (tokens, the distribution q each was drawn from, the grammar mask it was drawn under, how
    many of the tokens the draft has run itself: all but the last)."""
    xs: list[int] = []
    qs, masks = [], []
    fed = 0
    if k_eff <= 0:
        return xs, qs, masks, fed
    logits = draft.feed(pending)[-1]
    for i in range(k_eff):
        allowed = timed_allowed(constraint, stats)
        masks.append(allowed)
        q = sampling.probs(logits, allowed)
        x = sampling.draw(q)
        xs.append(x)
        qs.append(q)
        if x == eos_id:
            break
        if constraint is not None:
            constraint.advance(x)
            if constraint.finished:
                break
        if i < k_eff - 1:
            logits = draft.feed([x])[-1]
            fed += 1
    return xs, qs, masks, fed


def _accept(sampling: Sampling, logits_t, base: int, xs: list[int], qs: list, masks: list) -> tuple[int, int | None]:
    """(how many drafted tokens the target keeps, the token it draws at the first rejection or
    None). Row `base + i` of the target's logits predicts xs[i]. Greedy: kept iff it is the
    target's argmax. Sampled: kept with probability min(1, p(x)/q(x)); on rejection the target
    draws from normalise(max(0, p - q))."""
    for i, x in enumerate(xs):
        p = sampling.probs(logits_t[base + i], masks[i])
        if sampling.greedy:
            ok = int(p.argmax()) == x
        else:
            ok = sampling.uniform() < min(1.0, float(p[x] / qs[i][x]))
        if ok:
            continue
        residual = p if sampling.greedy else (p - qs[i]).clamp_min(0)
        return i, sampling.draw(residual / residual.sum() if float(residual.sum()) > 0 else p)
    return len(xs), None


def _emit(out: list[int], accepted: list[int], y: int | None, eos_id: int | None, constraint) -> bool:
    """Append the accepted tokens and then the target's own token `y` to `out`, up to EOS
    (which is not emitted); the grammar advances over `y` (it already has over the drafted
    tokens). True when EOS was reached."""
    for x in accepted:
        if x == eos_id:
            return True
        out.append(x)
    if y is not None:
        if y == eos_id:
            return True
        if constraint is not None:
            constraint.advance(y)
        out.append(y)
    return False
