"""Can a schema's shortest value fit in the token budget? A lower bound, checked before decoding.

The bound walks the schema for the shortest JSON text any valid value can have (required keys
only, minimum lengths and counts, the shortest enum member) and divides by the longest token's
byte length: if even that many tokens exceed the budget, no completion exists and the request
is refused up front. Budgets above the bound can still run out on long values; that is reported
as a typed failure (``GenerationIncomplete``), never as a truncated value.
"""
from __future__ import annotations

import json
import math

from tokenizers import decoders


def min_json_bytes(schema: dict, defs: dict | None = None, _seen: frozenset = frozenset()) -> int:
    defs = defs if defs is not None else {**schema.get("$defs", {}), **schema.get("definitions", {})}
    s = schema
    if not isinstance(s, dict):
        return 1
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        if name in _seen or name not in defs:
            return 1  # recursion: a lower bound needs no more
        return min_json_bytes(defs[name], defs, _seen | {name})
    if "const" in s:
        return len(json.dumps(s["const"], separators=(",", ":")).encode())
    if "enum" in s and s["enum"]:
        return min(len(json.dumps(v, separators=(",", ":")).encode()) for v in s["enum"])
    for key in ("anyOf", "oneOf"):
        if key in s and s[key]:
            return min(min_json_bytes(x, defs, _seen) for x in s[key])
    if "allOf" in s and s["allOf"]:
        return max(min_json_bytes(x, defs, _seen) for x in s["allOf"])
    t = s.get("type")
    if isinstance(t, list):
        return min(min_json_bytes({**s, "type": x}, defs, _seen) for x in t)
    if t == "object":
        props = s.get("properties", {})
        req = [k for k in s.get("required", []) if k in props]
        body = sum(len(json.dumps(k).encode()) + 1 + min_json_bytes(props[k], defs, _seen) for k in req)
        return 2 + body + max(len(req) - 1, 0)
    if t == "array":
        n = s.get("minItems", 0)
        prefix = s.get("prefixItems", [])
        items = [min_json_bytes(x, defs, _seen) for x in prefix[:n]]
        items += [min_json_bytes(s.get("items", {}), defs, _seen)] * max(n - len(prefix), 0)
        return 2 + sum(items) + max(n - 1, 0)
    if t == "string":
        return 2 + s.get("minLength", 0)
    if t in ("boolean",):
        return 4
    if t == "null":
        return 4
    return 1  # numbers, or no type at all


def min_tokens(schema: dict, longest_token_bytes: int) -> int:
    return math.ceil(min_json_bytes(schema) / max(longest_token_bytes, 1))


def longest_token_bytes(tokenizer) -> int:
    """Bytes of the longest token (byte-level BPE: the decoded form of its symbols)."""
    dec = decoders.ByteLevel()
    return max(len(dec.decode([t]).encode("utf-8", "replace")) for t in tokenizer.get_vocab())
