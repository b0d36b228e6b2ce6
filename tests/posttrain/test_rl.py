"""GRPO pieces: zero advantage for a constant group, variance selection, guarded rewards, async
with staleness 0 equal to sync, and exact RL resume."""
from __future__ import annotations

import copy
import time

import pytest
import torch

from training.posttrain.chat import END, prompt_ids
from training.posttrain.grpo import group_advantages, grpo_loss
from training.posttrain.rewards import guarded, reward_for, schema_reward
from training.posttrain.rl import Prompt, RLConfig, run_rl
from training.posttrain.selection import select_by_variance

from .conftest import micro_model


def test_advantage_is_zero_when_a_group_agrees():
    r = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    a = group_advantages(r)
    assert torch.equal(a[:2], torch.zeros(2, 4))
    torch.testing.assert_close(a[2], torch.tensor([-1.0, 1.0, -1.0, 1.0]), atol=1e-5, rtol=0)
    # and a constant group's loss at the sampling policy is its KL term only (zero at the reference)
    logp = torch.randn(4, 5, requires_grad=True)
    loss, _ = grpo_loss(logp, logp.detach(), logp.detach(), a[0], torch.ones(4, 5, dtype=torch.bool))
    loss.backward()
    assert float(loss.detach()) == 0.0 and torch.equal(logp.grad, torch.zeros(4, 5))


def test_selection_keeps_the_highest_variance_prompts():
    rewards = [[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1], [1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5]]
    assert select_by_variance([10, 11, 12, 13, 14, 15], rewards, 3) == [11, 14, 13]


def test_rewards_that_raise_or_hang_score_zero_and_are_logged():
    log = []

    def boom(text, task):
        raise RuntimeError("bad reward")

    def hang(text, task):
        time.sleep(5)
        return 1.0

    t0 = time.monotonic()
    assert guarded(boom, "x", {}, 1.0, log) == 0.0
    assert guarded(hang, "x", {}, 0.2, log) == 0.0
    assert time.monotonic() - t0 < 2
    assert [e["error"][:12] for e in log] == ["RuntimeError", "timed out af"]
    assert guarded(reward_for, " 42 ", {"type": "exact", "answer": "42"}) == 1.0
    task = {"schema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "string"}},
                       "required": ["a", "b"], "additionalProperties": False}, "expected": {"a": 1.5, "b": "x"}}
    assert schema_reward('{"a":1.5,"b":"y"}', task) == 0.75
    assert schema_reward('{"a":"1.5","b":"x"}', task) == 0.0 and schema_reward("{", task) == 0.0


def _share_of_a(text: str, task: dict) -> float:
    """A verifiable toy reward a random model scores unevenly on: the share of 'a' characters."""
    return text.count("a") / max(len(text), 1)


def _setup(chat_tokenizer):
    tok, _ = chat_tokenizer
    pool = [Prompt(prompt_ids(tok, [{"role": "user", "content": f"Say a word {i}."}]), {"type": "exact", "answer": "a"})
            for i in range(6)]
    model = micro_model(tok.get_vocab_size(), seed=1)
    return tok, pool, model


CFG = dict(steps=4, prompts_per_step=2, group=3, max_new_tokens=6, lr=3e-3, select_every=2,
           select_candidates=4, select_keep=2, select_samples=2, checkpoint_every=2, seed=5)


@pytest.mark.parametrize("selection", ["variance", "random"])
def test_async_with_staleness_zero_equals_sync(chat_tokenizer, tmp_path, selection):
    tok, pool, model = _setup(chat_tokenizer)
    end = tok.token_to_id(END)
    runs = {}
    for mode in ("sync", "async"):
        m = copy.deepcopy(model)
        cfg = RLConfig(**CFG, selection=selection, asynchronous=mode == "async", max_staleness=0)
        res = run_rl(m, copy.deepcopy(model), pool, cfg, str(tmp_path / mode), end, tok.decode, reward_fn=_share_of_a)
        runs[mode] = (m, res)
    (ms, rs), (ma, ra) = runs["sync"], runs["async"]
    assert rs.mean_reward == ra.mean_reward and rs.generations == ra.generations and ra.dropped_stale == 0
    for (k, a), b in zip(ms.state_dict().items(), ma.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=k)
    assert any(not torch.equal(a, b) for a, b in zip(ms.state_dict().values(), model.state_dict().values()))


def test_async_with_staleness_bound_trains_and_stays_within_it(chat_tokenizer, tmp_path):
    import json
    tok, pool, model = _setup(chat_tokenizer)
    cfg = RLConfig(**CFG, asynchronous=True, max_staleness=1)
    res = run_rl(model, copy.deepcopy(model), pool, cfg, str(tmp_path), tok.token_to_id(END), tok.decode,
                 reward_fn=_share_of_a)
    assert res.step == 4 and res.dropped_stale == 0
    log = [json.loads(x) for x in open(tmp_path / "posttrain_log.jsonl")]
    assert all(0 <= r["staleness"] <= 1 for r in log)


def test_actor_process_with_staleness_zero_equals_sync_and_bounds_staleness(chat_tokenizer, tmp_path):
    import json
    tok, pool, model = _setup(chat_tokenizer)
    end = tok.token_to_id(END)
    runs = {}
    for mode, stale in (("sync", 0), ("process", 0), ("process1", 1)):
        m = copy.deepcopy(model)
        cfg = RLConfig(**CFG, asynchronous=mode != "sync", actor_process=mode != "sync", max_staleness=stale)
        runs[mode] = (m, run_rl(m, copy.deepcopy(model), pool, cfg, str(tmp_path / mode), end, tok.decode,
                                reward_fn=_share_of_a))
    (ms, rs), (mp, rp) = runs["sync"], runs["process"]
    assert rs.mean_reward == rp.mean_reward and rs.generations == rp.generations and rp.dropped_stale == 0
    for (k, a), b in zip(ms.state_dict().items(), mp.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=k)
    assert runs["process1"][1].step == 4 and runs["process1"][1].dropped_stale == 0
    log = [json.loads(x) for x in open(tmp_path / "process1" / "posttrain_log.jsonl")]
    assert all(0 <= r["staleness"] <= 1 for r in log)


def test_rl_resume_is_exact(chat_tokenizer, tmp_path):
    tok, pool, model = _setup(chat_tokenizer)
    end = tok.token_to_id(END)
    cfg = RLConfig(**CFG)
    a = copy.deepcopy(model)
    ra = run_rl(a, copy.deepcopy(model), pool, cfg, str(tmp_path / "a"), end, tok.decode, reward_fn=_share_of_a)
    b = copy.deepcopy(model)
    run_rl(b, copy.deepcopy(model), pool, cfg, str(tmp_path / "b"), end, tok.decode, stop_after=2, reward_fn=_share_of_a)
    b2 = copy.deepcopy(model)
    rb = run_rl(b2, copy.deepcopy(model), pool, cfg, str(tmp_path / "b"), end, tok.decode, reward_fn=_share_of_a)
    assert rb.generations == ra.generations and rb.new_tokens == ra.new_tokens
    for (k, x), y in zip(a.state_dict().items(), b2.state_dict().values()):
        torch.testing.assert_close(x, y, rtol=0, atol=0, msg=k)
