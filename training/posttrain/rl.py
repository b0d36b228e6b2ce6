"""GRPO-style RL with verifiable rewards: an actor that samples groups of completions and a
learner that updates, run in lockstep (sync) or asynchronously with a staleness bound, the actor
in a thread or (``actor_process``) in a separate process (``actor_process.py``).

Single-turn tasks (exact QA, schema) are one sampled assistant turn; a tool task is a whole
playout on the tool platform (``tool_rollout``), rewarded by task success, whose loss covers
every assistant turn and none of the tool results.

The actor generates with ``training.models.generate`` (prefill once, then one token per step
from the KV cache) on its own copy of the policy, and records with every batch the policy
version that sampled it and that version's token log-probs. The learner takes batches in order;
batch k must come from a version no older than ``k - max_staleness``:

- the actor waits for that version before sampling batch k (so samples are never staler than
  the bound), and the clipped ratio ``pi / pi_old`` in the loss importance-corrects what
  staleness remains (samples within the bound are corrected, not dropped: dropping throws away
  generation work that the clipped ratio can still use);
- a batch past the bound reaching the learner anyway (an actor that ignored the wait) is
  dropped and counted.

With ``max_staleness=0`` the actor samples batch k with exactly version k, so the async run
equals the sync one. Every random draw is seeded by (seed, step), so a resumed sync run equals
the uninterrupted one.

Prompts come from a pool; with ``selection="variance"`` the actor re-scores ``select_candidates``
prompts every ``select_every`` steps (``select_samples`` completions each) and trains on the
``select_keep`` with the highest reward variance; ``"random"`` keeps a seeded random subset of
the same size; ``"all"`` cycles the whole pool.

An optional extra reward over the sampled ids (``reward_model.reward_model_reward``: a reward
model's ``weight * sigmoid(score)``) is added to the verifiable reward before the group advantage.
"""
from __future__ import annotations

import copy
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import torch

from training.checkpoint import save_checkpoint
from training.models.generate import generate
from training.posttrain.actor_process import run_actor_process
from training.posttrain.grpo import group_advantages, grpo_loss, token_logprobs
from training.posttrain.rewards import guarded, reward_for
from training.posttrain.selection import select_by_variance, select_random
from training.posttrain.tool_rollout import play_tool_task
from training.posttrain.sft import append_log, finite_step, resume


@dataclass
class RLConfig:
    steps: int = 20
    prompts_per_step: int = 4
    group: int = 4                 # completions per prompt
    max_new_tokens: int = 24
    temperature: float = 1.0
    lr: float = 5e-5
    clip_eps: float = 0.2
    kl_beta: float = 0.05
    grad_clip: float = 1.0
    selection: str = "variance"    # variance | random | all
    select_every: int = 10         # K: refresh the selection every K steps
    select_candidates: int = 32
    select_keep: int = 8
    select_samples: int = 4
    asynchronous: bool = False
    actor_process: bool = False    # async: the actor in a forked process instead of a thread
    max_staleness: int = 0
    reward_timeout: float = 2.0
    tool_max_turns: int = 3        # assistant turns of a tool-task playout
    tool_max_new_tokens: int = 64  # per tool-task turn (a call turn is longer than a QA answer)
    seed: int = 0
    checkpoint_every: int = 10


ExtraReward = Callable[[list[list[int]]], list[float]]


@dataclass
class Prompt:
    ids: list[int]
    task: dict


@dataclass
class Batch:
    step: int
    version: int
    ids: torch.Tensor          # [B, T] prompt + completion, padded
    mask: torch.Tensor         # [B, T-1] True where the next token is a completion token
    old_logp: torch.Tensor     # [B, T-1] log-probs under the sampling version
    rewards: torch.Tensor      # [prompts, group]
    new_tokens: int
    generations: int           # completions sampled for this batch, selection ones included


def complete(model, prompt: Prompt, n: int, cfg: RLConfig, seed: int, end_id: int, decode: Callable,
             reward_log: list, reward_fn: Callable[[str, dict], float] = reward_for,
             extra_reward: ExtraReward | None = None,
             tokenizer=None) -> tuple[list[list[int]], list[list[bool]], list[float], int]:
    """n sampled completions of one prompt: (sequences, which of their ids were generated,
    rewards, new tokens). A tool task is played out turn by turn on the tool platform
    (``tool_rollout``; needs ``tokenizer``) and scored by task success; other tasks are one
    turn scored by ``reward_fn``. ``extra_reward(seqs)`` (e.g. a reward model's bounded score)
    is added to the verifiable reward."""
    if prompt.task.get("type") == "tool":
        if tokenizer is None:
            raise ValueError("tool-task prompts need the tokenizer (for the tool turns)")
        plays = [play_tool_task(model, tokenizer, prompt.ids, prompt.task, cfg.tool_max_turns, cfg.tool_max_new_tokens,
                                cfg.temperature, seed * 17 + j) for j in range(n)]
        seqs, gens = [p.ids for p in plays], [p.generated for p in plays]
        rewards, new = [p.reward for p in plays], sum(sum(p.generated) for p in plays)
    else:
        ids = torch.tensor([prompt.ids]).repeat(n, 1)
        out = generate(model, ids, cfg.max_new_tokens, temperature=cfg.temperature, seed=seed, eos_token_id=end_id)
        seqs, gens, rewards, new = [], [], [], 0
        for row in out[:, len(prompt.ids):].tolist():
            comp = row[:row.index(end_id) + 1] if end_id in row else row
            new += len(comp)
            text = decode([t for t in comp if t != end_id])
            rewards.append(guarded(reward_fn, text, prompt.task, cfg.reward_timeout, reward_log))
            seqs.append(prompt.ids + comp)
            gens.append([False] * len(prompt.ids) + [True] * len(comp))
    if extra_reward is not None:
        rewards = [r + e for r, e in zip(rewards, extra_reward(seqs))]
    return seqs, gens, rewards, new


class Actor:
    """Samples batch k from the prompt pool with a given policy; owns the prompt selection."""

    def __init__(self, pool: list[Prompt], cfg: RLConfig, end_id: int, decode: Callable,
                 history: dict | None = None, reward_fn: Callable[[str, dict], float] = reward_for,
                 extra_reward: ExtraReward | None = None, tokenizer=None):
        self.pool, self.cfg, self.end_id, self.decode, self.reward_fn = pool, cfg, end_id, decode, reward_fn
        self.extra_reward, self.tokenizer = extra_reward, tokenizer
        self.history: dict[int, list[int]] = {int(k): v for k, v in (history or {}).items()}
        self.reward_log: list = []

    def _selected(self, model, k: int) -> tuple[list[int], int, int]:
        """(selected prompt indices, step they were chosen at, generations spent choosing now)."""
        cfg = self.cfg
        if cfg.selection == "all":
            return list(range(len(self.pool))), 0, 0
        at = k - k % cfg.select_every
        if at in self.history:
            return self.history[at], at, 0
        g = torch.Generator().manual_seed(cfg.seed * 7919 + at)
        cands = [int(i) for i in torch.randperm(len(self.pool), generator=g)[:cfg.select_candidates]]
        spent = 0
        if cfg.selection == "variance":
            scores = []
            for j, c in enumerate(cands):
                _, _, r, _ = complete(model, self.pool[c], cfg.select_samples, cfg, cfg.seed * 1_000_003 + at * 1009 + j,
                                      self.end_id, self.decode, self.reward_log, self.reward_fn, self.extra_reward,
                                      self.tokenizer)
                scores.append(r)
                spent += cfg.select_samples
            chosen = select_by_variance(cands, scores, cfg.select_keep)
        elif cfg.selection == "random":
            chosen = select_random(cands, cfg.select_keep, cfg.seed * 31 + at)
        else:
            raise ValueError(f"unknown selection {cfg.selection!r} (variance, random, all)")
        self.history[at] = chosen
        return chosen, at, spent

    @torch.no_grad()
    def batch(self, model, k: int, version: int) -> Batch:
        cfg = self.cfg
        chosen, at, spent = self._selected(model, k)
        P = cfg.prompts_per_step
        start = ((k - at) * P) % len(chosen)
        picked = [chosen[(start + i) % len(chosen)] for i in range(P)]
        seqs, gens, rewards, new = [], [], [], 0
        for i, p in enumerate(picked):
            s, g, r, n = complete(model, self.pool[p], cfg.group, cfg, cfg.seed * 1_000_003 + k * 1009 + 500 + i,
                                  self.end_id, self.decode, self.reward_log, self.reward_fn, self.extra_reward,
                                  self.tokenizer)
            seqs += s
            gens += g
            rewards.append(r)
            new += n
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), self.end_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), T - 1), dtype=torch.bool)
        for b, (s, g) in enumerate(zip(seqs, gens)):
            ids[b, :len(s)] = torch.tensor(s)
            mask[b, :len(s) - 1] = torch.tensor(g[1:], dtype=torch.bool)  # position t predicts id t+1
        old = token_logprobs(model, ids)
        return Batch(k, version, ids, mask, old, torch.tensor(rewards, dtype=torch.float32), new,
                     spent + len(seqs))


@dataclass
class RLResult:
    step: int
    version: int
    generations: int
    new_tokens: int
    dropped_stale: int
    nan_steps: list[int]
    reward_errors: int
    mean_reward: list[float] = field(default_factory=list)
    actor_seconds: float = 0.0
    wall_seconds: float = 0.0


def run_rl(model, ref_model, pool: list[Prompt], cfg: RLConfig, run_dir: str, end_id: int, decode: Callable,
           stop_after: int | None = None, log: Callable[[str], None] | None = None,
           reward_fn: Callable[[str, dict], float] = reward_for, extra_reward: ExtraReward | None = None,
           tokenizer=None) -> RLResult:
    """Train ``model`` (the policy, started from SFT) against ``ref_model`` (the frozen SFT model).
    ``reward_fn(completion text, task) -> [0, 1]`` defaults to the verifiable rewards by task type;
    ``extra_reward(prompt+completion ids) -> [float]`` (optional) is added to it. ``tokenizer`` is
    needed when the pool holds tool tasks (their playouts encode the tool turns)."""
    import os
    if not pool:
        raise ValueError("no RL prompts")
    os.makedirs(run_dir, exist_ok=True)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0, foreach=False)
    step, state = resume(run_dir, model, opt)
    ref_model.eval().requires_grad_(False)
    res = RLResult(step, step, state.get("generations", 0), state.get("new_tokens", 0), state.get("dropped_stale", 0),
                   list(state.get("nan_steps", [])), state.get("reward_errors", 0))
    actor = Actor(pool, cfg, end_id, decode, {k: v for k, v in state.get("selection", {}).items() if int(k) <= step},
                  reward_fn, extra_reward, tokenizer)
    end = cfg.steps if stop_after is None else min(cfg.steps, step + stop_after)
    started = time.perf_counter()

    def learn(b: Batch) -> None:
        nonlocal step
        if step - b.version > cfg.max_staleness:
            res.dropped_stale += 1
            return
        model.train()
        adv = group_advantages(b.rewards).reshape(-1)
        logp = token_logprobs(model, b.ids)
        with torch.no_grad():
            ref = token_logprobs(ref_model, b.ids)
        loss, st = grpo_loss(logp, b.old_logp, ref, adv, b.mask, cfg.clip_eps, cfg.kl_beta)
        ok = finite_step(model, opt, loss, cfg.grad_clip)
        if not ok:
            res.nan_steps.append(step)
        res.generations += b.generations
        res.new_tokens += b.new_tokens
        res.mean_reward.append(float(b.rewards.mean()))
        append_log(run_dir, {"stage": "rl", "step": step, "version": b.version, "staleness": step - b.version,
                             "reward": float(b.rewards.mean()), "loss": float(loss.detach()) if ok else None,
                             "skipped": None if ok else "non_finite_loss", **st})
        if log and step % 5 == 0:
            log(f"rl step {step}: reward {float(b.rewards.mean()):.3f} kl {st['kl']:.4f} staleness {step - b.version}")
        step += 1
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            res.reward_errors = len(actor.reward_log) + state.get("reward_errors", 0)
            save_checkpoint(run_dir, step, model.state_dict(), model.config.to_dict(), [opt.state_dict()],
                            {"step": step}, {"stage": "rl", "generations": res.generations, "new_tokens": res.new_tokens,
                                             "dropped_stale": res.dropped_stale, "nan_steps": res.nan_steps,
                                             "reward_errors": res.reward_errors,
                                             "selection": {str(k): v for k, v in list(actor.history.items()) if k <= step},
                                             "config": asdict(cfg)})

    if not cfg.asynchronous:
        while step < end:
            t0 = time.perf_counter()
            b = actor.batch(model.eval(), step, step)
            res.actor_seconds += time.perf_counter() - t0
            learn(b)
    else:
        run = run_actor_process if cfg.actor_process else _run_async
        run(model, actor, cfg, step, end, learn, lambda: step, res)
    res.step = res.version = step
    res.reward_errors = len(actor.reward_log) + state.get("reward_errors", 0)
    res.wall_seconds = time.perf_counter() - started
    return res


def _run_async(model, actor: Actor, cfg: RLConfig, start: int, end: int, learn, current_step, res: RLResult) -> None:
    """Actor thread on its own copy of the policy; the learner (this thread) publishes weights
    after every update."""
    published = {"version": start, "weights": {k: v.detach().clone() for k, v in model.state_dict().items()}}
    cond = threading.Condition()
    q: queue.Queue = queue.Queue(maxsize=cfg.max_staleness + 1)
    failure: list[BaseException] = []
    stop = threading.Event()

    def actor_loop():
        policy = copy.deepcopy(model).eval()
        have = -1
        try:
            for k in range(start, end):
                with cond:
                    cond.wait_for(lambda: published["version"] >= k - cfg.max_staleness or stop.is_set())
                    if stop.is_set():
                        return
                    version, weights = published["version"], published["weights"]
                if version != have:
                    policy.load_state_dict(weights)
                    have = version
                t0 = time.perf_counter()
                b = actor.batch(policy, k, version)
                res.actor_seconds += time.perf_counter() - t0
                while not stop.is_set():
                    try:
                        q.put(b, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        except BaseException as e:  # noqa: BLE001  re-raised in the learner thread
            failure.append(e)
            q.put(None)

    th = threading.Thread(target=actor_loop, daemon=True, name="cidermill-rl-actor")
    th.start()
    try:
        while current_step() < end:
            b = q.get()
            if b is None:
                raise failure[0]
            learn(b)
            with cond:
                published["version"] = current_step()
                published["weights"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
                cond.notify_all()
    finally:
        stop.set()
        with cond:
            cond.notify_all()
        th.join(timeout=30)
