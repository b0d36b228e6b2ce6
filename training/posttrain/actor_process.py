"""The asynchronous RL actor as a separate process, not a thread: generation then runs beside
the learner without sharing its interpreter, and what crosses between them is explicit.

- learner -> actor: ``(version, weights)`` after every update (tensors travel through shared
  memory, ``torch.multiprocessing``); the actor keeps only the newest it has received;
- actor -> learner: each ``Batch`` (its policy version and that version's token log-probs
  inside), plus the prompt selections it made, so the learner's checkpoint records them.

The actor waits for a version no older than ``k - max_staleness`` before sampling batch k, as
the thread does, so with ``max_staleness=0`` the process run equals the sync one. The process is
forked (Linux): the prompt pool, reward function and decoder need not pickle.
"""
from __future__ import annotations

import copy
import queue
import time

import torch
import torch.multiprocessing as mp

_POLL_S = 0.1


def _actor_main(model, actor, cfg, start: int, end: int, weights_q, batch_q, stop) -> None:
    torch.set_num_threads(1)
    policy = copy.deepcopy(model).eval()
    have = -1
    try:
        for k in range(start, end):
            version, weights = have, None
            while True:  # newest version received; wait while it is older than the bound allows
                try:
                    version, weights = weights_q.get(timeout=_POLL_S if version < k - cfg.max_staleness else 0.0)
                except queue.Empty:
                    if version >= k - cfg.max_staleness or stop.is_set():
                        break
            if stop.is_set():
                return
            if weights is not None:
                policy.load_state_dict(weights)
                have = version
            t0 = time.perf_counter()
            b = actor.batch(policy, k, have)
            batch_q.put(("batch", b, dict(actor.history), list(actor.reward_log), time.perf_counter() - t0))
        stop.wait()  # stay alive until the learner has taken every batch (their tensors live in our shared memory)
    except BaseException as e:  # noqa: BLE001  re-raised in the learner
        batch_q.put(("error", f"{type(e).__name__}: {e}", None, [], 0.0))


def _weights(model) -> dict:
    return {k: v.detach().clone().share_memory_() for k, v in model.state_dict().items()}


def run_actor_process(model, actor, cfg, start: int, end: int, learn, current_step, res) -> None:
    """Drive ``learn`` with batches from a forked actor process until ``current_step() == end``."""
    ctx = mp.get_context("fork")
    weights_q, batch_q, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    weights_q.put((start, _weights(model)))
    proc = ctx.Process(target=_actor_main, args=(model, actor, cfg, start, end, weights_q, batch_q, stop),
                       daemon=True, name="cidermill-rl-actor")
    proc.start()
    try:
        while current_step() < end:
            try:
                kind, b, history, reward_log, seconds = batch_q.get(timeout=5.0)
            except queue.Empty:
                if not proc.is_alive():
                    raise RuntimeError(f"RL actor process exited with code {proc.exitcode}") from None
                continue
            if kind == "error":
                raise RuntimeError(f"RL actor process failed: {b}")
            actor.history.update(history)
            actor.reward_log[:] = reward_log
            res.actor_seconds += seconds
            learn(b)
            weights_q.put((current_step(), _weights(model)))
    finally:
        stop.set()
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
            proc.join()
