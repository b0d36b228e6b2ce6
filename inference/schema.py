"""Python types -> JSON Schema, and JSON text -> an instance of the type.

Dataclasses, enums, pydantic models, ``typing`` containers (nested, ``list[...]``, ``X | None``,
``Literal``) and pydantic constraints (``Field(pattern=..., ge=..., le=..., max_length=...)``) all
go through pydantic's ``TypeAdapter``: one schema generator and one validator for every kind of
type, so the grammar and the parser agree on what "valid" means.

``bounded(schema)`` adds length caps (``maxLength`` on free strings, ``maxItems`` on arrays) where
the type sets none: an untrained or unlucky model could otherwise fill its whole token budget
with one string. A bounded output is still an instance of the type (a stricter subset).
"""
from __future__ import annotations

import copy
import json
from typing import Any

from inference.constraint import check_expressible
from inference.errors import SchemaError  # noqa: F401  (re-exported: callers import it from here)

DEFAULT_MAX_STRING = 48
DEFAULT_MAX_ITEMS = 6


def _adapter(tp):
    from pydantic import TypeAdapter  # noqa: PLC0415  (lazy: only schema-guided generation needs it)
    try:
        return TypeAdapter(tp)
    except Exception as e:  # noqa: BLE001  pydantic raises several error types for unsupported types
        raise SchemaError(f"{getattr(tp, '__name__', tp)!s}: cannot derive a schema "
                          f"({str(e).splitlines()[0]})") from None


def json_schema_for(tp) -> dict:
    """The JSON Schema of a Python type (a dict schema is returned as is)."""
    if isinstance(tp, dict):
        return copy.deepcopy(tp)
    try:
        return _adapter(tp).json_schema()
    except SchemaError:
        raise
    except Exception as e:  # noqa: BLE001  e.g. PydanticInvalidForJsonSchema for callables
        raise SchemaError(f"{getattr(tp, '__name__', tp)!s}: no JSON schema "
                          f"({str(e).splitlines()[0]})") from None


def bounded(schema: dict, max_string: int = DEFAULT_MAX_STRING, max_items: int = DEFAULT_MAX_ITEMS) -> dict:
    """A copy of ``schema`` with ``maxLength``/``maxItems`` added wherever the schema leaves them
    open (strings without pattern/enum/format, arrays), and closed objects (no extra keys) where
    ``additionalProperties`` is unset."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for x in node:
                walk(x)
            return
        if not isinstance(node, dict):
            return
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "string" in types and not ({"pattern", "enum", "const", "format"} & node.keys()):
            node.setdefault("maxLength", max(max_string, node.get("minLength", 0)))
        if "array" in types:
            node.setdefault("maxItems", max(max_items, node.get("minItems", 0)))
        if "object" in types and "properties" in node:
            node.setdefault("additionalProperties", False)
        for v in node.values():
            walk(v)

    walk(out)
    return out


def describe_schema(schema: dict) -> str:
    """Compact JSON of a schema, for the prompt (titles dropped: they are noise to a model)."""
    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [strip(x) for x in node]
        return node
    return json.dumps(strip(schema), separators=(",", ":"))


def parse_as(tp, text: str):
    """Validate JSON ``text`` into an instance of ``tp`` (a dict schema gives plain JSON values)."""
    if isinstance(tp, dict):
        return json.loads(text)
    return _adapter(tp).validate_json(text)


def generable(cls):
    """Class decorator: check once, at definition time, that ``cls`` has a schema the engine can
    express, and keep it on the class (``cls.__generation_schema__``). Any supported type also works
    undecorated; the decorator moves the error to import time."""
    schema = bounded(json_schema_for(cls))
    check_expressible(schema, what=cls.__name__)
    cls.__generation_schema__ = schema
    return cls


def generation_schema(tp) -> dict:
    """The bounded schema the decoder enforces for ``tp`` (cached on ``@generable`` classes)."""
    cached = getattr(tp, "__generation_schema__", None) if not isinstance(tp, dict) else None
    return copy.deepcopy(cached) if cached is not None else bounded(json_schema_for(tp))
