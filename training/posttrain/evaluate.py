"""Verifiable evaluation of a chat model on held-out conversations, greedy and unconstrained.

- ``exact``: share of QA answers equal to the known answer;
- ``schema``: mean schema reward (validity + field correctness), the parse rate (share of
  outputs that are JSON valid under the requested schema; constrained decoding would make that
  100%, unconstrained it shows whether the model learned the format) and the JSON rate (share
  that parse as JSON at all, schema or not: the syntax learned without the schema's keys);
- ``tool``: tool-task success (the final ``{"answer": ...}`` equals the known answer) and mean
  tool calls per task, played out by ``tool_rollout.play_tool_task`` (greedy), up to
  ``max_turns`` assistant turns.
"""
from __future__ import annotations

import json

import torch

from training.models.config import SequenceTooLongError
from training.models.generate import generate
from training.posttrain.chat import END, prompt_ids
from training.posttrain.data import prompt_of
from training.posttrain.rewards import reward_for, schema_valid
from training.posttrain.tool_rollout import play_tool_task

TASKS = ("exact", "schema", "tool")


def reply(model, tokenizer, messages: list[dict], max_new_tokens: int) -> str | None:
    """The model's greedy assistant turn (None when the prompt leaves no room in the context)."""
    ids = prompt_ids(tokenizer, messages)
    room = min(max_new_tokens, model.config.max_seq_len - len(ids))
    if room < 1:
        return None
    end = tokenizer.token_to_id(END)
    try:
        out = generate(model, torch.tensor([ids]), room, eos_token_id=end)[0, len(ids):].tolist()
    except SequenceTooLongError:
        return None
    out = out[:out.index(end)] if end in out else out
    return tokenizer.decode(out)


def run_tool_task(model, tokenizer, row: dict, max_turns: int = 4, max_new_tokens: int = 48) -> tuple[float, int]:
    """(reward, tool calls made) of one tool task played out greedily on the platform."""
    p = play_tool_task(model, tokenizer, prompt_ids(tokenizer, prompt_of(row)), row["task"], max_turns, max_new_tokens)
    return p.reward, p.calls


@torch.no_grad()
def evaluate(model, tokenizer, rows: list[dict], tasks: tuple[str, ...] = TASKS, max_new_tokens: int = 48) -> dict:
    model.eval()
    res: dict = {}
    exact = [r for r in rows if r["task"]["type"] == "exact"]
    if "exact" in tasks and exact:
        hits = [reward_for(reply(model, tokenizer, prompt_of(r), max_new_tokens) or "", r["task"]) for r in exact]
        res["exact_accuracy"] = sum(hits) / len(hits)
        res["exact_n"] = len(hits)
    sch = [r for r in rows if r["task"]["type"] == "schema"]
    if "schema" in tasks and sch:
        outs = [reply(model, tokenizer, prompt_of(r), max_new_tokens) or "" for r in sch]
        json_ok = parsed = 0
        for o, r in zip(outs, sch):
            try:
                value = json.loads(o)
            except ValueError:
                continue
            json_ok += 1
            parsed += schema_valid(value, r["task"]["schema"])
        res["schema_parse_rate"] = parsed / len(sch)
        res["json_parse_rate"] = json_ok / len(sch)
        res["schema_reward"] = sum(reward_for(o, r["task"]) for o, r in zip(outs, sch)) / len(sch)
        res["schema_n"] = len(sch)
    tool = [r for r in rows if r["task"]["type"] == "tool"]
    if "tool" in tasks and tool:
        played = [run_tool_task(model, tokenizer, r, max_new_tokens=max_new_tokens) for r in tool]
        res["tool_success"] = sum(p[0] for p in played) / len(played)
        res["tool_mean_calls"] = sum(p[1] for p in played) / len(played)
        res["tool_n"] = len(played)
    return res
