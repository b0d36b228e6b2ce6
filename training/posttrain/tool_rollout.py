"""A tool task played out turn by turn on a fresh ``ToolPlatform``: the model's assistant turns
call tools, the platform's results come back as tool turns, until the model answers.

One playout serves evaluation (greedy) and RL (sampled): it keeps the ids exactly as the model
saw them and marks which of them the model generated, so RL's loss covers the assistant turns
of the whole trajectory and never the tool results, and the reward is tool-task success (the
final ``{"answer": ...}`` equals the known answer).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import torch

from training.models.generate import generate
from training.posttrain.chat import END, ROLE_TOKENS, tool_result_text
from training.posttrain.rewards import tool_answer_reward
from training.posttrain.tool_platform import ToolPlatform

MAX_CALLS_PER_TURN = 4


@dataclass
class Playout:
    ids: list[int]          # prompt + every turn, as the model saw them
    generated: list[bool]   # per id: True where the model produced it
    reward: float
    calls: int
    stop: str               # answer | bad_json | no_calls | no_room | max_turns


def tool_turn_ids(tokenizer, results: list[dict]) -> list[int]:
    """A tool turn holding ``results`` and the ``<|assistant|>`` marker the next turn starts with."""
    body = tokenizer.encode(tool_result_text(results), add_special_tokens=False).ids
    return [tokenizer.token_to_id(ROLE_TOKENS["tool"]), *body, tokenizer.token_to_id(END),
            tokenizer.token_to_id(ROLE_TOKENS["assistant"])]


def _call_turn(text: str):
    """The turn's JSON object, or None when it is not one."""
    try:
        turn = json.loads(text)
    except ValueError:
        return None
    return turn if isinstance(turn, dict) else None


@torch.no_grad()
def play_tool_task(model, tokenizer, prompt: list[int], task: dict, max_turns: int = 4, max_new_tokens: int = 48,
                   temperature: float = 0.0, seed: int | None = None) -> Playout:
    """``prompt``: ids ending in ``<|assistant|>``; ``task``: ``{"answer", "tables"}``."""
    platform = ToolPlatform(task.get("tables"))
    end = tokenizer.token_to_id(END)
    ids, gen, calls = list(prompt), [False] * len(prompt), 0
    for turn in range(max_turns):
        room = min(max_new_tokens, model.config.max_seq_len - len(ids))
        if room < 1:
            return Playout(ids, gen, 0.0, calls, "no_room")
        out = generate(model, torch.tensor([ids]), room, temperature=temperature,
                       seed=None if seed is None else seed * 31 + turn, eos_token_id=end)[0, len(ids):].tolist()
        comp = out[:out.index(end) + 1] if end in out else out
        ids, gen = ids + comp, gen + [True] * len(comp)
        parsed = _call_turn(tokenizer.decode([t for t in comp if t != end]))
        if parsed is None:
            return Playout(ids, gen, 0.0, calls, "bad_json")
        if "answer" in parsed:
            return Playout(ids, gen, tool_answer_reward(parsed["answer"], task), calls, "answer")
        if not (isinstance(parsed.get("calls"), list) and parsed["calls"]):
            return Playout(ids, gen, 0.0, calls, "no_calls")
        results = [platform.execute(c if isinstance(c, dict) else {}) for c in parsed["calls"][:MAX_CALLS_PER_TURN]]
        calls += len(results)
        extra = tool_turn_ids(tokenizer, results)
        ids, gen = ids + extra, gen + [False] * len(extra)
    return Playout(ids, gen, 0.0, calls, "max_turns")
