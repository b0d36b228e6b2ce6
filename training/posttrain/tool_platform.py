"""A small stateful tool platform for tool-use data and tool-task rewards.

Typed tools, each a plain annotated function so ``inference.tools.Tool.from_function`` turns it
into the same JSON Schema the constrained decoder enforces:

- ``calculator(expression)``: + - * / and parentheses over numbers (parsed, never ``eval``-ed);
- ``table_lookup(table, row, column)``: one cell of a named table the platform holds;
- ``convert_units(value, from_unit, to_unit)``: length, mass, temperature, time;
- ``kv_set(key, value)`` / ``kv_get(key)``: a key-value store that lives as long as the platform.

``execute(call)`` runs one ``{"name", "arguments"}`` call and answers the result dict the
inference package sends back to a model (``{"name", "result"}`` or ``{"name", "error"}``): a bad
call is an error the model reads, never an exception.
"""
from __future__ import annotations

import ast
import operator

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
# unit -> (dimension, factor to the dimension's base unit)
UNITS = {"m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01), "mi": ("length", 1609.344),
         "ft": ("length", 0.3048), "g": ("mass", 0.001), "kg": ("mass", 1.0), "lb": ("mass", 0.45359237),
         "s": ("time", 1.0), "min": ("time", 60.0), "h": ("time", 3600.0),
         "C": ("temperature", None), "F": ("temperature", None), "K": ("temperature", None)}
MAX_EXPRESSION = 120


def number_text(v: float) -> str:
    """Numbers as tools return them: integers without a decimal point, others to 4 places."""
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:.4f}".rstrip("0")


def _calc(node):
    if isinstance(node, ast.Expression):
        return _calc(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_calc(node.left), _calc(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _calc(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    raise ValueError("only numbers, + - * / and parentheses are allowed")


def _to_celsius(v: float, unit: str) -> float:
    return v if unit == "C" else (v - 32) * 5 / 9 if unit == "F" else v - 273.15


def _from_celsius(v: float, unit: str) -> float:
    return v if unit == "C" else v * 9 / 5 + 32 if unit == "F" else v + 273.15


class ToolPlatform:
    def __init__(self, tables: dict[str, list[list[str]]] | None = None):
        self.tables = dict(tables or {})
        self.store: dict[str, str] = {}
        self.calls = 0

    # ---- the tools --------------------------------------------------------------------------------
    def calculator(self, expression: str) -> str:
        """Evaluate an arithmetic expression (+ - * / and parentheses)."""
        if len(expression) > MAX_EXPRESSION:
            raise ValueError(f"expression longer than {MAX_EXPRESSION} characters")
        return number_text(_calc(ast.parse(expression.replace(",", ""), mode="eval")))

    def table_lookup(self, table: str, row: str, column: str) -> str:
        """Read one cell of a named table by row name and column name."""
        if table not in self.tables:
            raise KeyError(f"no table {table!r} (tables: {', '.join(sorted(self.tables))})")
        grid = self.tables[table]
        if column not in grid[0]:
            raise KeyError(f"no column {column!r} in {table!r}")
        for r in grid[1:]:
            if r[0] == row:
                return r[grid[0].index(column)]
        raise KeyError(f"no row {row!r} in {table!r}")

    def convert_units(self, value: float, from_unit: str, to_unit: str) -> str:
        """Convert a value between units of length, mass, time or temperature."""
        if from_unit not in UNITS or to_unit not in UNITS:
            raise ValueError(f"unknown unit (known: {', '.join(UNITS)})")
        (dim_a, fa), (dim_b, fb) = UNITS[from_unit], UNITS[to_unit]
        if dim_a != dim_b:
            raise ValueError(f"cannot convert {dim_a} to {dim_b}")
        if dim_a == "temperature":
            return number_text(_from_celsius(_to_celsius(value, from_unit), to_unit))
        return number_text(value * fa / fb)

    def kv_set(self, key: str, value: str) -> str:
        """Store a value under a key."""
        self.store[key] = value
        return "ok"

    def kv_get(self, key: str) -> str:
        """Read the value stored under a key."""
        if key not in self.store:
            raise KeyError(f"no key {key!r}")
        return self.store[key]

    # ---- running calls ----------------------------------------------------------------------------
    def functions(self) -> list:
        return [self.calculator, self.table_lookup, self.convert_units, self.kv_set, self.kv_get]

    def execute(self, call: dict) -> dict:
        name, args = call.get("name"), call.get("arguments")
        self.calls += 1
        fns = {f.__name__: f for f in self.functions()}
        if name not in fns:
            return {"name": name, "error": f"unknown tool {name!r}"}
        if not isinstance(args, dict):
            return {"name": name, "error": "arguments must be an object"}
        try:
            return {"name": name, "result": fns[name](**args)}
        except (TypeError, ValueError, KeyError, ZeroDivisionError, SyntaxError, OverflowError) as e:
            return {"name": name, "error": f"{type(e).__name__}: {e}"}
