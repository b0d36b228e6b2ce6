"""A reward model learned from the tool trajectory trees' preference pairs, usable as an extra
RL reward beside the verifiable ones.

The model is the policy's own architecture (started from the SFT checkpoint, so it already reads
the chat format) with one scalar head on the final-norm hidden state of a sequence's last token.
It is trained with the Bradley-Terry loss ``-log sigmoid(r_chosen - r_rejected)``: the
probability that the chosen reply beats the rejected one is ``sigmoid`` of their score gap.

Pairs from one trajectory tree share a context, so the held-out split is by tree (the pair id
without its ``-k`` suffix): a held-out accuracy then measures preferences on prompts the model
never saw, not memorised contexts. In RL the score enters as ``weight * sigmoid(r)``, bounded to
``[0, weight]`` and added to the verifiable reward (itself in ``[0, 1]``).
"""
from __future__ import annotations

import json
import os
import zlib
from collections import Counter
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from safetensors.torch import load_model, save_model
from torch import nn

from corpus.errors import CidermillError
from training.models import build_model, config_from_dict
from training.posttrain.chat import END, prompt_ids

WEIGHTS_FILE = "reward_model.safetensors"
CONFIG_FILE = "reward_model.json"
KIND = "preference_pairs"


class RewardModel(nn.Module):
    """``body`` (a causal LM) read at the last real token of each row, then ``score`` -> a scalar."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body = body
        self.score = nn.Linear(body.config.d_model, 1)
        nn.init.normal_(self.score.weight, std=body.config.d_model ** -0.5)
        nn.init.zeros_(self.score.bias)

    @property
    def config(self):
        return self.body.config

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``ids [B, T]`` right-padded, ``lengths [B]`` real tokens per row -> rewards ``[B]``.
        The hidden state is the body's final norm output (captured by a hook, so every
        architecture the registry builds works unchanged); causal attention makes the padding
        after a row's last token irrelevant to it."""
        box = {}
        hook = self.body.norm.register_forward_hook(lambda mod, inp, out: box.__setitem__("h", out))
        try:
            self.body(ids)
        finally:
            hook.remove()
        last = box["h"][torch.arange(ids.shape[0]), lengths - 1]
        return self.score(last.float()).squeeze(-1)


def bradley_terry_loss(r_chosen: torch.Tensor, r_rejected: torch.Tensor) -> torch.Tensor:
    """Mean ``-log sigmoid(r_chosen - r_rejected)``: the negative log-likelihood of the observed
    preferences when P(chosen beats rejected) = sigmoid(score gap). ``logsigmoid`` keeps it finite
    for large gaps."""
    return -F.logsigmoid(r_chosen - r_rejected).mean()


# ---- data --------------------------------------------------------------------------------------
@dataclass
class Pair:
    source: str            # the trajectory tree the pair comes from (the held-out split unit)
    chosen: list[int]      # context + chosen reply + <|end|>
    rejected: list[int]


def read_pairs(dataset: str) -> list[dict]:
    from corpus.reader import open_dataset
    ds = open_dataset(dataset)
    if ds.kind != KIND:
        raise CidermillError(f"{dataset}: a {ds.kind!r} dataset, not preference pairs "
                             "(write them with `cidermill sft data --preferences DIR`)")
    return [{**r, "context": json.loads(r["context"])} for r in ds.iter_rows(["id", "context", "chosen", "rejected"])]


def source_of(pair_id: str) -> str:
    return pair_id.rsplit("-", 1)[0]


def reply_ids(tokenizer, context: list[dict], reply: str) -> list[int]:
    """The ids RL scores: the prompt (ending in ``<|assistant|>``), the reply, ``<|end|>``."""
    return prompt_ids(tokenizer, context) + tokenizer.encode(reply, add_special_tokens=False).ids + [tokenizer.token_to_id(END)]


def encode_pairs(tokenizer, rows: list[dict], max_len: int) -> tuple[list[Pair], Counter]:
    out, dropped = [], Counter()
    for r in rows:
        c, j = reply_ids(tokenizer, r["context"], r["chosen"]), reply_ids(tokenizer, r["context"], r["rejected"])
        if max(len(c), len(j)) > max_len:
            dropped["pair_too_long"] += 1
            continue
        out.append(Pair(source_of(r["id"]), c, j))
    return out, dropped


def split_by_source(pairs: list[Pair], heldout: float, seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """(train, held-out): a stable hash of (seed, source) puts every pair of one tree on one side."""
    def held(p: Pair) -> bool:
        return zlib.crc32(f"{seed}:{p.source}".encode()) % 10_000 < heldout * 10_000
    return [p for p in pairs if not held(p)], [p for p in pairs if held(p)]


def _padded(seqs: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.full((len(seqs), max(len(s) for s in seqs)), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
    return ids, torch.tensor([len(s) for s in seqs])


@torch.no_grad()
def score(rm: RewardModel, seqs: list[list[int]], pad: int, batch: int = 16) -> list[float]:
    rm.eval()
    out: list[float] = []
    for i in range(0, len(seqs), batch):
        out += rm(*_padded(seqs[i:i + batch], pad)).tolist()
    return out


def pair_accuracy(rm: RewardModel, pairs: list[Pair], pad: int) -> float:
    """Share of pairs whose chosen reply scores strictly higher (chance: 0.5)."""
    if not pairs:
        return float("nan")
    c, j = score(rm, [p.chosen for p in pairs], pad), score(rm, [p.rejected for p in pairs], pad)
    return sum(a > b for a, b in zip(c, j)) / len(pairs)


# ---- training ----------------------------------------------------------------------------------
@dataclass
class RMConfig:
    steps: int = 100
    batch: int = 8          # pairs per step
    lr: float = 1e-4
    grad_clip: float = 1.0
    heldout: float = 0.2    # share of trajectory trees held out
    seed: int = 0


def train_reward_model(rm: RewardModel, train: list[Pair], cfg: RMConfig, pad: int,
                       log=None) -> dict:
    """Bradley-Terry steps on seeded batches of ``train``; a non-finite loss skips the step and is
    recorded. Returns {"losses", "nan_steps"}."""
    from training.posttrain.sft import finite_step
    if not train:
        raise CidermillError("no training preference pairs")
    opt = torch.optim.AdamW(rm.parameters(), lr=cfg.lr, weight_decay=0.0, foreach=False)
    losses, nan_steps = [], []
    for step in range(cfg.steps):
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
        idx = torch.randint(len(train), (min(cfg.batch, len(train)),), generator=g).tolist()
        ids, lengths = _padded([train[i].chosen for i in idx] + [train[i].rejected for i in idx], pad)
        rm.train()
        r = rm(ids, lengths)
        loss = bradley_terry_loss(r[:len(idx)], r[len(idx):])
        if finite_step(rm, opt, loss, cfg.grad_clip):
            losses.append(float(loss.detach()))
        else:
            nan_steps.append(step)
        if log and (step % 20 == 0 or step == cfg.steps - 1):
            log(f"rm step {step}: loss {float(loss.detach()):.4f}")
    return {"losses": losses, "nan_steps": nan_steps}


# ---- files -------------------------------------------------------------------------------------
def save_reward_model(rm: RewardModel, out: str, meta: dict) -> None:
    """Weights (body + head) in one safetensors file; the body's config and ``meta`` in JSON."""
    os.makedirs(out, exist_ok=True)
    save_model(rm, os.path.join(out, WEIGHTS_FILE))
    with open(os.path.join(out, CONFIG_FILE), "w") as f:
        json.dump({"model_config": rm.config.to_dict(), **meta}, f, indent=1)


def load_reward_model(path: str) -> RewardModel:
    cfg_path, w_path = os.path.join(path, CONFIG_FILE), os.path.join(path, WEIGHTS_FILE)
    if not (os.path.exists(cfg_path) and os.path.exists(w_path)):
        raise CidermillError(f"{path}: not a reward model directory (no {CONFIG_FILE} / {WEIGHTS_FILE}; "
                             "train one with `cidermill sft rm`)")
    with open(cfg_path) as f:
        rm = RewardModel(build_model(config_from_dict(json.load(f)["model_config"])))
    load_model(rm, w_path)
    return rm.eval().requires_grad_(False)


def reward_model_reward(rm: RewardModel, weight: float, pad: int):
    """``seqs -> [weight * sigmoid(r)]``: the bounded extra reward RL adds to the verifiable one."""
    def extra(seqs: list[list[int]]) -> list[float]:
        return [weight * float(torch.sigmoid(torch.tensor(r))) for r in score(rm, seqs, pad)]
    return extra

