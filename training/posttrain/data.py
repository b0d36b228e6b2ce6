"""Read a conversations dataset (written by the SFT data builders) into what SFT, RL and
evaluation consume; rows the context cannot carry are counted by reason, never silently lost."""
from __future__ import annotations

import json
from collections import Counter

from corpus.errors import CidermillError
from corpus.reader import open_dataset
from training.posttrain.chat import ChatFormatError, Encoded, encode, prompt_ids

KIND = "conversations"


def read_rows(dataset: str, split: str | None = None, kinds: set[str] | None = None) -> list[dict]:
    ds = open_dataset(dataset)
    if ds.kind != KIND:
        raise CidermillError(f"{dataset}: a {ds.kind!r} dataset, not conversations (build one with `cidermill sft data`)")
    rows = []
    for r in ds.iter_rows(["id", "kind", "split", "messages", "task"]):
        if (split is None or r["split"] == split) and (kinds is None or r["kind"] in kinds):
            rows.append({**r, "messages": json.loads(r["messages"]), "task": json.loads(r["task"])})
    return rows


def encode_rows(tokenizer, rows: list[dict], max_len: int) -> tuple[list[Encoded], Counter]:
    out, dropped = [], Counter()
    for r in rows:
        try:
            out.append(encode(tokenizer, r["messages"], max_len))
        except ChatFormatError as e:
            dropped[e.reason] += 1
    return out, dropped


def prompt_of(row: dict) -> list[dict]:
    """The messages a model answers: everything before the last assistant turn for single-turn
    tasks; just the opening turns (before the first assistant turn) for tool tasks."""
    msgs = row["messages"]
    if row["task"]["type"] == "tool":
        first = next(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        return msgs[:first]
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return msgs[:last]


def rl_prompts(tokenizer, rows: list[dict], max_len: int, max_new_tokens: int,
               tool_new_tokens: int | None = None) -> tuple[list, Counter]:
    """Verifiable prompts for RL: single-turn tasks, and tool tasks (played out on the tool
    platform, so they need room for at least one call turn of ``tool_new_tokens``; None leaves
    tool tasks out)."""
    from training.posttrain.rl import Prompt
    out, dropped = [], Counter()
    for r in rows:
        tool = r["task"]["type"] == "tool"
        if tool and tool_new_tokens is None:
            dropped["tool_task_not_asked_for"] += 1
            continue
        ids = prompt_ids(tokenizer, prompt_of(r))
        if len(ids) + (tool_new_tokens if tool else max_new_tokens) > max_len:
            dropped["prompt_too_long"] += 1
            continue
        out.append(Prompt(ids, r["task"]))
    return out, dropped
