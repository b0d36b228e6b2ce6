"""Worked-solution steps that state values, and the step verifier that re-derives each one.

Why: process supervision labels every step, not only the final answer. A step is a lead
phrase in the problem's language, an arithmetic expression over numbers and earlier steps
(`s1`, `s2`, ...), and the value it states. `check_steps` evaluates each expression with exact
rationals from the values the earlier steps *stated* (so one wrong step is wrong once, and the
steps after it are judged on what they were given) and labels each step correct or not.
`corrupt_step` makes the wrong steps of the process split.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

MAX_POW = 64          # exponent bound of `**` in a step expression
MAX_MAGNITUDE = 10 ** 30


class StepError(ValueError):
    """A step expression that cannot be evaluated (unknown name, bad syntax, inexact root)."""


@dataclass
class Step:
    lead: str             # "Subtract 3 from both sides", in the problem's language
    expr: str             # "11 - 3" or "s1 / 2": numbers, + - * / **, sqrt(), comb(), earlier steps s1..
    value: Fraction       # the value the step states
    unit: str = ""


def fmt(v: Fraction) -> str:
    """Exact display: integers as is, finite decimals (up to 6 places) as decimals, else p/q."""
    v = Fraction(v)
    if v.denominator == 1:
        return str(v.numerator)
    d = v.denominator
    for p in range(1, 7):
        if (10 ** p) % d == 0:
            s = f"{v.numerator * (10 ** p // d) / 10 ** p:.{p}f}"
            return s if Fraction(s) == v else f"{v.numerator}/{d}"
    return f"{v.numerator}/{d}"


def lit(v: Fraction) -> str:
    """fmt(v) safe to place inside a larger expression (negatives and p/q in parentheses)."""
    s = fmt(v)
    return f"({s})" if v < 0 or "/" in s else s


def _exact_sqrt(x: Fraction) -> Fraction:
    if x < 0:
        raise StepError("square root of a negative number")
    n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
    if n * n != x.numerator or d * d != x.denominator:
        raise StepError(f"square root of {fmt(x)} is not rational")
    return Fraction(n, d)


def _comb(n: Fraction, k: Fraction) -> Fraction:
    if n.denominator != 1 or k.denominator != 1 or n < 0 or k < 0:
        raise StepError("comb() needs non-negative integers")
    return Fraction(math.comb(int(n), int(k)))


FUNCS = {"sqrt": _exact_sqrt, "comb": _comb}


def evaluate(expr: str, names: dict[str, Fraction]) -> Fraction:
    """Exact value of a step expression; StepError on anything outside the small grammar."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise StepError(f"cannot parse {expr!r}") from None

    def ev(node) -> Fraction:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Fraction(str(node.value))
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise StepError(f"unknown name {node.id!r}")
            return Fraction(names[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                out = a + b
            elif isinstance(node.op, ast.Sub):
                out = a - b
            elif isinstance(node.op, ast.Mult):
                out = a * b
            elif isinstance(node.op, ast.Div):
                if b == 0:
                    raise StepError("division by zero")
                out = a / b
            elif isinstance(node.op, ast.Pow):
                if b.denominator != 1 or abs(b) > MAX_POW:
                    raise StepError("exponent must be a small integer")
                out = a ** int(b)
            else:
                raise StepError(f"operator {type(node.op).__name__} not allowed")
            if abs(out) > MAX_MAGNITUDE:
                raise StepError("value out of range")
            return out
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCS and not node.keywords:
            return FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise StepError(f"{type(node).__name__} not allowed in a step")

    return ev(tree)


def step_names(steps: list[Step]) -> dict[str, Fraction]:
    return {f"s{i + 1}": Fraction(s.value) for i, s in enumerate(steps)}


def render_expr(expr: str, stated: dict[str, Fraction]) -> str:
    """The expression as a reader sees it: earlier steps replaced by the values they stated."""
    tree = ast.parse(expr, mode="eval")

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in stated:
                return ast.copy_location(ast.Name(id=f"__v{node.id}", ctx=ast.Load()), node)
            return node

    text = ast.unparse(Sub().visit(tree))
    for k, v in sorted(stated.items(), key=lambda kv: -len(kv[0])):
        shown = fmt(v)
        text = text.replace(f"__v{k}", f"({shown})" if v < 0 or "/" in shown else shown)
    return text


def render_steps(steps: list[Step]) -> list[str]:
    out, stated = [], {}
    for i, s in enumerate(steps):
        shown = render_expr(s.expr, stated)
        value = fmt(s.value)
        formula = value if shown == value else f"{shown} = {value}"
        out.append(f"{s.lead}: {formula}{(' ' + s.unit) if s.unit else ''}")
        stated[f"s{i + 1}"] = Fraction(s.value)
    return out


def check_steps(steps: list[Step]) -> list[bool]:
    """Each step's label: does its expression, from what earlier steps stated, give its value?"""
    labels, stated = [], {}
    for i, s in enumerate(steps):
        labels.append(evaluate(s.expr, stated) == Fraction(s.value))
        stated[f"s{i + 1}"] = Fraction(s.value)
    return labels


def corrupt_step(rng: np.random.Generator, steps: list[Step]) -> tuple[list[Step], int]:
    """A copy with one step stating a wrong value; later steps recomputed from it (the error
    propagates as in a real wrong solution). Returns (steps, index of the wrong step)."""
    k = int(rng.integers(len(steps)))
    out = [Step(s.lead, s.expr, Fraction(s.value), s.unit) for s in steps]
    v = out[k].value
    slips = [v + 1, v - 1, v * 2, v + 10, -v, v + Fraction(1, 2)] if v != 0 else [Fraction(1), Fraction(-1), Fraction(2)]
    slips = [x for x in slips if x != v]
    out[k].value = slips[int(rng.integers(len(slips)))]
    stated = step_names(out[:k + 1])
    for i in range(k + 1, len(out)):
        try:
            out[i].value = evaluate(out[i].expr, stated)
        except StepError:  # e.g. sqrt of a now-irrational value: the chain stops at the slip
            out = out[:i]
            break
        stated[f"s{i + 1}"] = out[i].value
    return out, k


@dataclass
class MathProblem:
    """One generated problem: text, worked steps, and the data its independent check reads."""
    family: str                  # "algebra.linear", "units.chain", ...
    language: str
    difficulty: int              # 1 easy .. 3 hard
    problem: str
    steps: list[Step]
    answer: list[Fraction]       # the solution's final values (roots sorted), from the steps
    data: dict                   # what the independent route needs (never the steps)


def answer_text(values: list[Fraction]) -> str:
    return ", ".join(fmt(v) for v in values)
