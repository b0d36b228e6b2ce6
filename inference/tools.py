"""Tool calling on top of guided generation.

Tools are typed Python functions; their signatures become JSON Schemas. Each model turn is
constrained to either ``{"calls": [{"name": ..., "arguments": {...}}, ...]}`` (one or several calls
to the declared tools, with arguments valid for that tool) or ``{"answer": <value of the answer
type>}``. The executor runs a turn's calls concurrently, each under a time limit; a tool that
raises or hangs becomes an error result that the model reads, never an exception in the caller's
code. The last allowed turn may only answer, so a run always ends in a typed answer.
"""
from __future__ import annotations

import inspect
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from inference.generator import GenerationIncomplete
from inference.prompting import with_tool_results, with_tools
from inference.schema import SchemaError, bounded, generation_schema, json_schema_for, parse_as


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    fn: Callable
    adapter: Any = field(repr=False, default=None)  # pydantic model validating the arguments

    @classmethod
    def from_function(cls, fn: Callable) -> "Tool":
        from pydantic import create_model  # noqa: PLC0415  (lazy: only tool schemas need it)
        sig = inspect.signature(fn)
        fields = {}
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise SchemaError(f"tool {fn.__name__}: *args/**kwargs cannot become a schema")
            if p.annotation is inspect.Parameter.empty:
                raise SchemaError(f"tool {fn.__name__}: parameter {p.name!r} has no type annotation")
            fields[p.name] = (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
        model = create_model(f"{fn.__name__}_args", **fields)
        params = bounded(json_schema_for(model))
        doc = (inspect.getdoc(fn) or fn.__name__).splitlines()[0]
        return cls(fn.__name__, doc, params, fn, model)

    def schema(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def as_tools(items) -> list[Tool]:
    tools = [t if isinstance(t, Tool) else Tool.from_function(t) for t in items]
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise SchemaError(f"tool names must be unique, got {names}")
    return tools


def turn_schema(tools: list[Tool], answer_schema: dict, max_parallel: int, may_call: bool) -> dict:
    answer = {"type": "object", "properties": {"answer": answer_schema}, "required": ["answer"],
              "additionalProperties": False}
    if not may_call or not tools:
        return {**answer, "$defs": answer_schema.get("$defs", {})}
    calls = [{"type": "object", "properties": {"name": {"const": t.name}, "arguments": _inline_defs(t.parameters)},
              "required": ["name", "arguments"], "additionalProperties": False} for t in tools]
    call_turn = {"type": "object", "properties": {"calls": {"type": "array", "items": {"anyOf": calls},
                                                           "minItems": 1, "maxItems": max_parallel}},
                 "required": ["calls"], "additionalProperties": False}
    defs = dict(answer_schema.get("$defs", {}))
    for t in tools:
        defs.update(t.parameters.get("$defs", {}))
    return {"anyOf": [call_turn, answer], "$defs": defs}


def _inline_defs(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "$defs"}


@dataclass
class ToolCall:
    name: str
    arguments: dict
    result: Any = None
    error: str | None = None
    seconds: float = 0.0

    def as_result(self) -> dict:
        return {"name": self.name, "error": self.error} if self.error else {"name": self.name, "result": self.result}


class ToolExecutor:
    """Runs one turn's calls concurrently, one daemon thread per call; each gets ``timeout``
    seconds. A hung tool's thread is abandoned (Python cannot kill a thread; being a daemon it
    does not keep the process alive) and its call reported as timed out."""

    def __init__(self, tools: list[Tool], timeout: float = 10.0):
        self.tools = {t.name: t for t in tools}
        self.timeout = timeout

    def _run_one(self, call: ToolCall, box: dict) -> None:
        try:
            tool = self.tools[call.name]
            args = tool.adapter.model_validate(call.arguments)
            box["result"] = tool.fn(**{k: getattr(args, k) for k in type(args).model_fields})
        except BaseException as e:  # noqa: BLE001  the model reads the tool's error
            box["error"] = f"{type(e).__name__}: {e}"

    def run(self, calls: list[ToolCall]) -> list[ToolCall]:
        started = time.monotonic()
        boxes = [{} for _ in calls]
        threads = [threading.Thread(target=self._run_one, args=(c, b), daemon=True, name=f"cidermill-tool-{c.name}")
                   for c, b in zip(calls, boxes)]
        for t in threads:
            t.start()
        for c, t, box in zip(calls, threads, boxes):
            t.join(max(self.timeout - (time.monotonic() - started), 0.0))
            if t.is_alive():
                c.error = f"timed out after {self.timeout:g} s"
            elif "error" in box:
                c.error = box["error"]
            else:
                c.result = box.get("result")
            c.seconds = time.monotonic() - started
        return calls


@dataclass
class ToolRun:
    answer: Any
    turns: list[list[ToolCall]]
    transcript: str
    stats: list = field(default_factory=list)  # one DecodeStats per model turn (calls, then the answer)


def run_with_tools(gen, prompt: str, tools, answer_type, max_turns: int = 4, max_parallel: int = 4,
                   timeout: float = 10.0, max_new_tokens: int = 192, **kw) -> ToolRun:
    """Let the model call ``tools`` (functions or ``Tool``s) until it answers with ``answer_type``."""
    tools = as_tools(tools)
    answer_schema = generation_schema(answer_type)
    executor = ToolExecutor(tools, timeout)
    transcript = with_tools(prompt, [t.schema() for t in tools], answer_schema)
    turns: list[list[ToolCall]] = []
    stats = []
    for turn in range(max_turns):
        schema = turn_schema(tools, answer_schema, max_parallel, may_call=turn < max_turns - 1)
        out = gen.generate(transcript, schema=schema, max_new_tokens=max_new_tokens, **kw)
        stats.append(out.stats)
        if not out.stats.finished:
            raise GenerationIncomplete(f"tool turn {turn + 1} was not complete after {max_new_tokens} tokens",
                                       out.text, out.stats)
        msg = json.loads(out.text)
        if "answer" in msg:
            value = parse_as(answer_type, json.dumps(msg["answer"]))
            return ToolRun(value, turns, transcript + out.text, stats)
        calls = executor.run([ToolCall(c["name"], c["arguments"]) for c in msg["calls"]])
        turns.append(calls)
        transcript = with_tool_results(transcript, out.text, [c.as_result() for c in calls])
    raise AssertionError("unreachable: the last turn may only answer")  # pragma: no cover
