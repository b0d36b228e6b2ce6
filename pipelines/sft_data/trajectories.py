"""Tool-use trajectory trees on the project's tool platform.

A scripted agent solves each task with the platform's typed tools; every turn is a tree node
(the assistant's call JSON and the tool results it got). With probability ``error_rate`` a node
first gets an injected error (a misspelt row, a swapped operand, a wrong unit), which stays in
the tree as a rejected branch, and the corrected node is its sibling: the tree keeps both, as an
annotator's correction does. SFT trains on the path of accepted nodes; each rejected node and
its corrected sibling form a preference pair (same context, chosen vs rejected turn).
"""
from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from inference.prompting import with_tools
from inference.tools import Tool
from pipelines.sft_data.instructions import _row
from pipelines.sft_data.sources import MAX_ROWS, small_table, split_of, table_text
from synth.rng import choice, item_rng
from synth.tables_core import numeric_columns, parse_number
from training.posttrain.chat import tool_result_text
from training.posttrain.tool_platform import ToolPlatform, number_text

ANSWER_SCHEMA = {"type": "string", "maxLength": 48}
TABLE = "t"


def _calls(*calls: tuple[str, dict]) -> str:
    return json.dumps({"calls": [{"name": n, "arguments": a} for n, a in calls]}, separators=(",", ":"))


def _answer(v: str) -> str:
    return json.dumps({"answer": v}, separators=(",", ":"), ensure_ascii=False)


def tool_prompt(platform: ToolPlatform, question: str, names: set[str] | None = None) -> str:
    """The inference package's tool prompt, listing ``names`` (default: every tool)."""
    tools = [Tool.from_function(f).schema() for f in platform.functions() if names is None or f.__name__ in names]
    return with_tools(question, tools, ANSWER_SCHEMA)


def _misspell(rng: np.random.Generator, s: str) -> str:
    return s[:-1] if len(s) > 2 else s + "x"


def _plan(rng: np.random.Generator, grid: list[list[str]]) -> tuple[str, list[list[tuple[str, dict]]], str] | None:
    """(question, turns of calls, expected answer) for one task drawn for this table."""
    nums = numeric_columns(grid)
    kind = choice(rng, ("sum", "convert", "remember"))
    body = grid[1:]
    if kind == "sum" and nums and len(body) >= 2:
        col = grid[0][nums[0]]
        a, b = (int(x) for x in rng.permutation(len(body))[:2])
        ra, rb = body[a][0], body[b][0]
        va, vb = parse_number(body[a][nums[0]]), parse_number(body[b][nums[0]])
        expr = f"{number_text(va)}+{number_text(vb)}"
        return (f"Using table {TABLE!r}, what is the {col} of {ra} plus the {col} of {rb}?",
                [[("table_lookup", {"table": TABLE, "row": ra, "column": col}),
                  ("table_lookup", {"table": TABLE, "row": rb, "column": col})],
                 [("calculator", {"expression": expr})]], number_text(va + vb))
    if kind == "convert":
        frm, to = choice(rng, (("km", "m"), ("kg", "g"), ("h", "min"), ("m", "cm"), ("C", "F")))
        v = float(int(rng.integers(1, 50)))
        out = ToolPlatform().convert_units(v, frm, to)
        return (f"Convert {number_text(v)} {frm} to {to}.", [[("convert_units", {"value": v, "from_unit": frm, "to_unit": to})]], out)
    r = int(rng.integers(len(body)))
    key = f"k{int(rng.integers(100))}"
    return (f"Store the first column of row {r + 1} of table {TABLE!r} under key {key!r}, then read it back.",
            [[("kv_set", {"key": key, "value": body[r][0]})], [("kv_get", {"key": key})]], body[r][0])


def _injected(rng: np.random.Generator, calls: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The same turn with one plausible mistake."""
    k = int(rng.integers(len(calls)))
    name, args = calls[k]
    args = dict(args)
    if name == "table_lookup":
        args["row"] = _misspell(rng, args["row"])
    elif name == "calculator":
        args["expression"] = args["expression"].replace("+", "-", 1)
    elif name == "convert_units":
        args["to_unit"] = "mi" if args["to_unit"] in ("m", "cm") else "lb" if args["to_unit"] == "g" else "s" if args["to_unit"] == "min" else "K"
    elif name in ("kv_get", "kv_set"):
        args["key"] = args["key"] + "0"
    return calls[:k] + [(name, args)] + calls[k + 1:]


def trajectory_tree(seed: int, index: int, error_rate: float = 0.3, max_rows: int = MAX_ROWS) -> dict:
    """One task's tree: ``{"prompt": messages, "nodes": [{"id", "parent", "assistant", "tool",
    "rejected"}], "answer"}``; node parents index into ``nodes`` (-1 = the prompt)."""
    grid, title, _ = small_table(seed, index, "tools", max_rows)
    rng = item_rng(seed, "sft-tool-plan", index)
    question, turns, answer = _plan(rng, grid)
    platform = ToolPlatform({TABLE: grid})
    shadow = ToolPlatform({TABLE: grid})  # runs rejected branches so they never touch the real state
    names = {n for calls in turns for n, _ in calls}
    prompt = [{"role": "user", "content": tool_prompt(platform, f"{table_text(grid, title)}\n{question}", names)}]
    nodes, parent = [], -1
    for calls in turns:
        if rng.random() < error_rate:
            bad = _injected(rng, calls)
            shadow.store = dict(platform.store)
            results = [shadow.execute({"name": n, "arguments": a}) for n, a in bad]
            nodes.append({"id": len(nodes), "parent": parent, "assistant": _calls(*bad),
                          "tool": tool_result_text(results), "rejected": True})
        results = [platform.execute({"name": n, "arguments": a}) for n, a in calls]
        nodes.append({"id": len(nodes), "parent": parent, "assistant": _calls(*calls),
                      "tool": tool_result_text(results), "rejected": False})
        parent = len(nodes) - 1
    nodes.append({"id": len(nodes), "parent": parent, "assistant": _answer(answer), "tool": None, "rejected": False})
    return {"prompt": prompt, "nodes": nodes, "answer": answer, "tables": {TABLE: grid}, "tools": sorted(names)}


def _context(tree: dict, node_id: int) -> list[dict]:
    """Messages before node ``node_id``: the prompt plus its accepted ancestors."""
    chain, p = [], tree["nodes"][node_id]["parent"]
    while p != -1:
        chain.append(tree["nodes"][p])
        p = chain[-1]["parent"]
    msgs = list(tree["prompt"])
    for n in reversed(chain):
        msgs.append({"role": "assistant", "content": n["assistant"]})
        if n["tool"] is not None:
            msgs.append({"role": "tool", "content": n["tool"]})
    return msgs


def corrected_path(tree: dict) -> list[dict]:
    last = max(n["id"] for n in tree["nodes"] if not n["rejected"])
    return _context(tree, last) + [{"role": "assistant", "content": tree["nodes"][last]["assistant"]}]


def preference_pairs(tree: dict) -> list[dict]:
    out = []
    for n in tree["nodes"]:
        if n["rejected"]:
            chosen = next(m for m in tree["nodes"] if m["parent"] == n["parent"] and not m["rejected"])
            out.append({"context": _context(tree, n["id"]), "chosen": chosen["assistant"], "rejected": n["assistant"]})
    return out


def tool_conversations(seed: int, n_items: int, error_rate: float = 0.3, start: int = 20_000,
                       max_rows: int = MAX_ROWS) -> Iterator[dict]:
    for i in range(start, start + n_items):
        tree = trajectory_tree(seed, i, error_rate, max_rows)
        row = _row(f"tools-{seed}-{i:06d}", "tools", split_of(i), "en", corrected_path(tree),
                   {"type": "tool", "answer": tree["answer"], "tables": tree["tables"], "tools": tree["tools"]})
        row["tree"] = json.dumps(tree, ensure_ascii=False)
        yield row
