"""The reward model: the Bradley-Terry loss against its formula, training that lifts held-out pair
accuracy above chance (split by source), a safetensors round trip, and one RL step with it."""
from __future__ import annotations

import copy
import math

import torch

from training.posttrain.chat import END, prompt_ids
from training.posttrain.reward_model import (RewardModel, RMConfig, bradley_terry_loss, encode_pairs,
                                             load_reward_model, pair_accuracy, reward_model_reward,
                                             save_reward_model, score, split_by_source, train_reward_model)
from training.posttrain.rl import Prompt, RLConfig, run_rl

from .conftest import micro_model


def test_bradley_terry_loss_is_its_formula():
    rc, rr = torch.tensor([2.0, -1.0, 0.5, 30.0]), torch.tensor([0.0, 1.0, 0.5, -30.0])
    want = sum(-math.log(1 / (1 + math.exp(-(c - r)))) for c, r in zip(rc.tolist(), rr.tolist())) / 4
    assert abs(float(bradley_terry_loss(rc, rr)) - want) < 1e-6
    assert abs(float(bradley_terry_loss(torch.tensor([0.3]), torch.tensor([0.3]))) - math.log(2)) < 1e-6
    assert torch.isfinite(bradley_terry_loss(torch.tensor([-500.0]), torch.tensor([500.0])))  # no overflow
    c = torch.zeros(3, requires_grad=True)
    bradley_terry_loss(c, torch.zeros(3)).backward()
    assert torch.all(c.grad < 0)   # descending the loss raises the chosen reward


def _pairs(n_sources: int) -> list[dict]:
    """Tool-call replies: chosen ones call the tool the question names, rejected ones another."""
    rows = []
    for i in range(n_sources):
        for k in range(2):
            a, b = 3 + i, 7 * k + i % 5
            ctx = [{"role": "user", "content": f"What is the sum of {a} and {b}? Use the tools."}]
            rows.append({"id": f"tools-0-{i:06d}-{k}", "context": ctx,
                         "chosen": '{"calls": [{"name": "add", "arguments": {"a": %d, "b": %d}}]}' % (a, b),
                         "rejected": "Quelle est la capitale? Le moulin presse les pommes %d." % a})
    return rows


def test_training_lifts_heldout_pair_accuracy_above_chance(chat_tokenizer, tmp_path):
    tok, _ = chat_tokenizer
    pad = tok.token_to_id(END)
    pairs, dropped = encode_pairs(tok, _pairs(40), 128)
    assert not dropped
    train, held = split_by_source(pairs, 0.25, seed=0)
    assert held and train and not {p.source for p in train} & {p.source for p in held}
    rm = RewardModel(micro_model(tok.get_vocab_size(), seed=3))
    out = train_reward_model(rm, train, RMConfig(steps=25, batch=8, lr=3e-3, seed=0), pad)
    assert not out["nan_steps"] and out["losses"][-1] < out["losses"][0]
    assert pair_accuracy(rm, held, pad) >= 0.9      # chance is 0.5
    save_reward_model(rm, str(tmp_path / "rm"), {"heldout_accuracy": 1.0})
    back = load_reward_model(str(tmp_path / "rm"))
    seqs = [p.chosen for p in held[:3]]
    assert score(back, seqs, pad) == score(rm, seqs, pad)


def test_rl_runs_a_step_with_the_reward_model_added(chat_tokenizer, tmp_path):
    tok, _ = chat_tokenizer
    end = tok.token_to_id(END)
    pool = [Prompt(prompt_ids(tok, [{"role": "user", "content": f"Say a word {i}."}]), {"type": "exact", "answer": "zzz"})
            for i in range(2)]
    policy = micro_model(tok.get_vocab_size(), seed=1)
    rm = RewardModel(micro_model(tok.get_vocab_size(), seed=2)).eval().requires_grad_(False)
    before = copy.deepcopy(policy.state_dict())
    cfg = RLConfig(steps=1, prompts_per_step=2, group=3, max_new_tokens=5, lr=3e-3, selection="all", seed=1)
    res = run_rl(policy, copy.deepcopy(policy), pool, cfg, str(tmp_path), end, tok.decode,
                 extra_reward=reward_model_reward(rm, 0.5, end))
    # the verifiable reward is 0 for every completion here: all reward comes from the model, in (0, 0.5)
    assert res.step == 1 and 0.0 < res.mean_reward[0] < 0.5
    assert any(not torch.equal(a, b) for a, b in zip(before.values(), policy.state_dict().values()))
