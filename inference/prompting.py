"""Prompt text the framework adds: the response format, and the tool list.

The model sees the schema it must answer in (the grammar enforces it either way; a trained model
answers better when it is told). The format is plain text so any tokenizer can carry it.
"""
from __future__ import annotations

import json

from inference.schema import describe_schema


def with_response_format(prompt: str, schema: dict) -> str:
    return f"{prompt}\n\nRespond with one JSON value matching this JSON Schema:\n{describe_schema(schema)}\nJSON: "


def with_tools(prompt: str, tool_schemas: list[dict], answer_schema: dict) -> str:
    tools = "\n".join(f"- {t['name']}: {t['description']} arguments={describe_schema(t['parameters'])}"
                      for t in tool_schemas)
    return (f"{prompt}\n\nTools you may call:\n{tools}\n"
            'Reply with {"calls": [{"name": ..., "arguments": {...}}, ...]} to call tools (several '
            'calls run in parallel), or {"answer": ...} with the answer matching '
            f"{describe_schema(answer_schema)}\nJSON: ")


def with_tool_results(transcript: str, call_json: str, results: list[dict]) -> str:
    lines = "\n".join(json.dumps(r, separators=(",", ":"), default=str) for r in results)
    return f"{transcript}{call_json}\nTool results:\n{lines}\nJSON: "
