"""Verifiable rewards, each in [0, 1], and the guard every reward runs under.

- ``exact``: the completion (whitespace-normalised) equals the known answer;
- ``schema``: the completion parses as JSON valid under the task's schema (0.5) and its fields
  equal the source values (the other 0.5, by share of correct fields);
- ``tool``: the tool run's final answer equals the known answer (scored by the caller that ran
  the tools; see ``tool_answer_reward``).

``guarded(fn, ...)`` runs a reward in a daemon thread with a time limit: a reward that raises or
hangs scores 0 and is logged, never an exception in the RL loop.
"""
from __future__ import annotations

import json
import math
import threading
from typing import Any, Callable

TYPES = {"string": str, "number": (int, float), "integer": int, "boolean": bool, "object": dict, "array": list}


def _norm(s: str) -> str:
    return " ".join(s.split())


def schema_valid(value: Any, schema: dict) -> bool:
    """Validity under the subset of JSON Schema the builders emit (types, required, closed
    objects, maxLength, items)."""
    t = schema.get("type")
    if t is not None:
        py = TYPES.get(t)
        if py is None or not isinstance(value, py) or (t in ("number", "integer") and isinstance(value, bool)):
            return False
    if isinstance(value, str) and len(value) > schema.get("maxLength", math.inf):
        return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(k not in value for k in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        return all(schema_valid(v, props[k]) for k, v in value.items() if k in props)
    if isinstance(value, list) and "items" in schema:
        return all(schema_valid(v, schema["items"]) for v in value)
    return True


def exact_reward(text: str, task: dict) -> float:
    return 1.0 if _norm(text) == _norm(str(task["answer"])) else 0.0


def schema_reward(text: str, task: dict) -> float:
    try:
        value = json.loads(text)
    except ValueError:
        return 0.0
    if not schema_valid(value, task["schema"]):
        return 0.0
    exp = task["expected"]
    right = sum(1 for k, v in exp.items() if value.get(k) == v or (isinstance(v, float) and isinstance(value.get(k), (int, float))
                                                                   and abs(value[k] - v) < 1e-9))
    return 0.5 + 0.5 * right / max(len(exp), 1)


def tool_answer_reward(answer: Any, task: dict) -> float:
    return 1.0 if answer is not None and _norm(str(answer)) == _norm(str(task["answer"])) else 0.0


REWARDS: dict[str, Callable[[str, dict], float]] = {"exact": exact_reward, "schema": schema_reward}


def reward_for(text: str, task: dict) -> float:
    return REWARDS[task["type"]](text, task)


def guarded(fn: Callable[[str, dict], float], text: str, task: dict, timeout: float = 2.0,
            log: list | None = None) -> float:
    """``fn(text, task)`` clipped to [0, 1]; 0 (and a ``log`` entry) if it raises, hangs past
    ``timeout`` seconds or returns something that is not a finite number."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(text, task)
        except BaseException as e:  # noqa: BLE001  any failure of a reward is a zero reward
            box["error"] = f"{type(e).__name__}: {e}"

    t = threading.Thread(target=target, daemon=True, name="cidermill-reward")
    t.start()
    t.join(timeout)
    if t.is_alive():
        err = f"timed out after {timeout:g} s"
    elif "error" in box:
        err = box["error"]
    else:
        v = box.get("value")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return min(max(float(v), 0.0), 1.0)
        err = f"returned {v!r}, not a number"
    if log is not None:
        log.append({"reward": getattr(fn, "__name__", str(fn)), "error": err})
    return 0.0
