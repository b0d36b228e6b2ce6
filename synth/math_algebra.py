"""Algebra problems: linear equations, quadratics with rational roots, 2x2 linear systems.

The generator picks the solution first and builds the equation around it; the steps solve it
the textbook way (collect terms, discriminant, Cramer's rule). The independent check parses
the equation as printed in the problem and solves it with sympy.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from synth.math_lang import t
from synth.math_steps import MathProblem, Step, evaluate, lit, step_names

X, Y = sympy.symbols("x y")


def _nz(rng: np.random.Generator, lo: int, hi: int) -> int:
    v = 0
    while v == 0:
        v = int(rng.integers(lo, hi + 1))
    return v


def _term(c: int, var: str, first: bool) -> str:
    sign = "-" if c < 0 else ("" if first else "+")
    mag = abs(c)
    body = (var if mag == 1 else f"{mag}*{var}") if var else str(mag)
    return f"{sign} {body}".strip() if not first else f"{sign}{body}"


def _side(*terms: tuple[int, str]) -> str:
    out = []
    for c, var in terms:
        if c != 0:
            out.append(_term(c, var, not out))
    return " ".join(out) or "0"


def make_linear(rng: np.random.Generator, lang: str, difficulty: int) -> MathProblem:
    span = (9, 20, 60)[difficulty - 1]
    x0 = int(rng.integers(-span, span + 1))
    a = _nz(rng, -12, 12)
    c = int(rng.integers(-12, 13)) if difficulty > 1 else 0
    while c == a:
        c = int(rng.integers(-12, 13))
    b = int(rng.integers(-span, span + 1))
    d = (a - c) * x0 + b
    eq = f"{_side((a, 'x'), (b, ''))} = {_side((c, 'x'), (d, ''))}"
    steps = [Step(t("collect_x", lang), f"{a} - {lit(Fraction(c))}", Fraction(a - c)),
             Step(t("collect_const", lang), f"{d} - {lit(Fraction(b))}", Fraction(d - b)),
             Step(t("divide_coef", lang), "s2 / s1", Fraction(d - b, a - c))]
    return MathProblem("algebra.linear", lang, difficulty, t("q_linear", lang, eq=eq), steps, [Fraction(x0)],
                       {"equations": [eq], "unknowns": ["x"]})


def make_quadratic(rng: np.random.Generator, lang: str, difficulty: int) -> MathProblem:
    span = (6, 12, 20)[difficulty - 1]
    r1, r2 = int(rng.integers(-span, span + 1)), int(rng.integers(-span, span + 1))
    a = 1 if difficulty == 1 else _nz(rng, -4, 4)
    if difficulty == 3:  # a rational root: a x^2 + b x + c with roots r1 and r2 / q
        q = int(rng.integers(2, 5))
        a, b, c = a * q, -a * (q * r1 + r2), a * r1 * r2
    else:
        b, c = -a * (r1 + r2), a * r1 * r2
    eq = f"{_side((a, 'x**2'), (b, 'x'), (c, ''))} = 0"
    steps = [Step(t("discriminant", lang), f"{lit(Fraction(b))}**2 - 4*{lit(Fraction(a))}*{lit(Fraction(c))}",
                  Fraction(b * b - 4 * a * c)),
             Step(t("root_disc", lang), "sqrt(s1)", Fraction(0)),
             Step(t("root_plus", lang), f"({-b} + s2) / {lit(Fraction(2 * a))}", Fraction(0)),
             Step(t("root_minus", lang), f"({-b} - s2) / {lit(Fraction(2 * a))}", Fraction(0))]
    for i in (1, 2, 3):
        steps[i].value = evaluate(steps[i].expr, step_names(steps[:i]))
    return MathProblem("algebra.quadratic", lang, difficulty, t("q_quadratic", lang, eq=eq), steps,
                       sorted({steps[2].value, steps[3].value}), {"equations": [eq], "unknowns": ["x"]})


def make_system(rng: np.random.Generator, lang: str, difficulty: int) -> MathProblem:
    span = (5, 10, 25)[difficulty - 1]
    x0, y0 = int(rng.integers(-span, span + 1)), int(rng.integers(-span, span + 1))
    while True:
        a1, b1, a2, b2 = (_nz(rng, -9, 9) for _ in range(4))
        if a1 * b2 - a2 * b1 != 0:
            break
    c1, c2 = a1 * x0 + b1 * y0, a2 * x0 + b2 * y0
    eq1 = f"{_side((a1, 'x'), (b1, 'y'))} = {c1}"
    eq2 = f"{_side((a2, 'x'), (b2, 'y'))} = {c2}"
    steps = [Step(t("det", lang), f"({a1})*({b2}) - ({a2})*({b1})", Fraction(a1 * b2 - a2 * b1)),
             Step(t("det_x", lang), f"({c1})*({b2}) - ({c2})*({b1})", Fraction(c1 * b2 - c2 * b1)),
             Step(t("det_y", lang), f"({a1})*({c2}) - ({a2})*({c1})", Fraction(a1 * c2 - a2 * c1)),
             Step(t("cramer_x", lang), "s2 / s1", Fraction(x0)),
             Step(t("cramer_y", lang), "s3 / s1", Fraction(y0))]
    return MathProblem("algebra.system", lang, difficulty, t("q_system", lang, eq1=eq1, eq2=eq2), steps,
                       [Fraction(x0), Fraction(y0)], {"equations": [eq1, eq2], "unknowns": ["x", "y"]})


def _rational(v) -> Fraction:
    v = sympy.nsimplify(v) if not isinstance(v, sympy.Rational) else v
    if not isinstance(v, sympy.Rational):
        raise ValueError(f"non-rational solution {v}")
    return Fraction(int(v.p), int(v.q))


def check_algebra(p: MathProblem) -> list[Fraction]:
    """Independent answer: sympy solves the equations as printed (x first, then y): the real roots
    of one polynomial equation, or the unique solution of a linear system."""
    syms = {"x": X, "y": Y}
    exprs = []
    for eq in p.data["equations"]:
        lhs, rhs = eq.split("=")
        exprs.append(sympy.parse_expr(lhs, local_dict=syms) - sympy.parse_expr(rhs, local_dict=syms))
    unknowns = [syms[u] for u in p.data["unknowns"]]
    if len(unknowns) == 1:
        roots = sympy.roots(sympy.Poly(exprs[0], unknowns[0]))
        if sum(roots.values()) != sympy.Poly(exprs[0], unknowns[0]).degree():
            raise ValueError("sympy found fewer roots than the degree")
        return sorted(_rational(r) for r in roots if r.is_real)
    sols = list(sympy.linsolve(exprs, unknowns))
    if len(sols) != 1 or any(v.free_symbols for v in sols[0]):
        raise ValueError(f"no unique solution for a system ({sols})")
    return [_rational(v) for v in sols[0]]
