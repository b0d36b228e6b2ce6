"""Probability problems with exact fractions: dice sums, at least one six, cards, urns.

The steps count with formulas (complements, binomial coefficients). The independent check
enumerates the sample space (every roll, every hand, every draw of labelled balls) and counts.
Sizes stay small enough to enumerate: at most 4 dice, 3 cards, 12 balls.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from synth.math_lang import t
from synth.math_steps import MathProblem, Step
from synth.rng import choice

RANKS = "A23456789TJQK"
SUITS = "SHDC"


def make_probability(rng: np.random.Generator, lang: str, difficulty: int) -> MathProblem:
    kind = choice(rng, ("dice_sum", "dice_six", "cards", "urn"))
    if kind == "dice_sum":
        k = int(rng.integers(2, 13))
        fav = min(k - 1, 13 - k)
        steps = [Step(t("ways_fav", lang), f"{fav}", Fraction(fav)), Step(t("ways_all", lang), "6**2", Fraction(36)),
                 Step(t("probability", lang), "s1 / s2", Fraction(fav, 36))]
        return MathProblem("probability.dice_sum", lang, 1, t("q_dice_sum", lang, k=k), steps, [steps[-1].value],
                           {"kind": kind, "k": k})
    if kind == "dice_six":
        n = int(rng.integers(2, 3 + difficulty))
        steps = [Step(t("p_none", lang), f"(5/6)**{n}", Fraction(5, 6) ** n),
                 Step(t("p_complement", lang), "1 - s1", 1 - Fraction(5, 6) ** n)]
        return MathProblem("probability.dice_six", lang, difficulty, t("q_dice_six", lang, n=n), steps,
                           [steps[-1].value], {"kind": kind, "n": n})
    if kind == "cards":
        n = int(rng.integers(2, 4))
        what = choice(rng, ("hearts", "aces"))
        good = 13 if what == "hearts" else 4
        steps = [Step(t("ways_fav", lang), f"comb({good}, {n})", Fraction(_comb(good, n))),
                 Step(t("ways_all", lang), f"comb(52, {n})", Fraction(_comb(52, n))),
                 Step(t("probability", lang), "s1 / s2", Fraction(_comb(good, n), _comb(52, n)))]
        return MathProblem("probability.cards", lang, 2, t("q_cards", lang, n=n, what=t(what, lang)), steps,
                           [steps[-1].value], {"kind": kind, "n": n, "what": what})
    r, b = int(rng.integers(2, 7)), int(rng.integers(2, 7))
    n = int(rng.integers(2, min(r + b, 4 + difficulty)))
    k = int(rng.integers(max(0, n - b), min(n, r) + 1))
    steps = [Step(t("ways_red", lang), f"comb({r}, {k})", Fraction(_comb(r, k))),
             Step(t("ways_blue", lang), f"comb({b}, {n - k})", Fraction(_comb(b, n - k))),
             Step(t("ways_all", lang), f"comb({r + b}, {n})", Fraction(_comb(r + b, n))),
             Step(t("probability", lang), "s1 * s2 / s3", Fraction(_comb(r, k) * _comb(b, n - k), _comb(r + b, n)))]
    return MathProblem("probability.urn", lang, 3, t("q_urn", lang, r=r, b=b, n=n, k=k), steps, [steps[-1].value],
                       {"kind": kind, "r": r, "b": b, "n": n, "k": k})


def _comb(n: int, k: int) -> int:
    return math.comb(n, k)


def check_probability(p: MathProblem) -> list[Fraction]:
    """Independent answer: enumerate every outcome and count the favourable ones."""
    d = p.data
    if d["kind"] == "dice_sum":
        rolls = list(itertools.product(range(1, 7), repeat=2))
        return [Fraction(sum(1 for r in rolls if sum(r) == d["k"]), len(rolls))]
    if d["kind"] == "dice_six":
        rolls = list(itertools.product(range(1, 7), repeat=d["n"]))
        return [Fraction(sum(1 for r in rolls if 6 in r), len(rolls))]
    if d["kind"] == "cards":
        deck = [rk + s for rk in RANKS for s in SUITS]
        good = (lambda c: c[1] == "H") if d["what"] == "hearts" else (lambda c: c[0] == "A")
        hands = list(itertools.combinations(deck, d["n"]))
        return [Fraction(sum(1 for h in hands if all(good(c) for c in h)), len(hands))]
    balls = ["r"] * d["r"] + ["b"] * d["b"]
    draws = list(itertools.combinations(range(len(balls)), d["n"]))
    return [Fraction(sum(1 for dr in draws if sum(balls[i] == "r" for i in dr) == d["k"]), len(draws))]
