"""Unit conversion chains: a quantity converted step by step along everyday factors.

The steps use the textbook factors between neighbouring units (1 mile = 1760 yd, 1 ft =
12 in, ...). The independent check uses a second table, every unit's exact SI definition
(1 in = 0.0254 m, 1 lb = 0.45359237 kg, ...), and converts in one go: a wrong neighbour
factor or a wrong step direction shows up as a mismatch.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from synth.math_lang import t
from synth.math_steps import MathProblem, Step, fmt, lit
from synth.rng import choice

F = Fraction
# chains of units, largest first, with the factor from each unit to the next one
CHAINS = {
    "length_imperial": (["mi", "yd", "ft", "in", "cm", "mm"], [F(1760), F(3), F(12), F("2.54"), F(10)]),
    "length_metric": (["km", "m", "cm", "mm"], [F(1000), F(100), F(10)]),
    "time": (["week", "day", "h", "min", "s"], [F(7), F(24), F(60), F(60)]),
    "mass": (["lb", "oz", "g", "mg"], [F(16), F("28.349523125"), F(1000)]),
    "mass_metric": (["t", "kg", "g"], [F(1000), F(1000)]),
    "volume_us": (["gal", "qt", "pt", "cup", "fl oz"], [F(4), F(2), F(2), F(8)]),
    "volume_metric": (["m3", "L", "mL"], [F(1000), F(1000)]),
}
# exact SI value of one unit (m, s, kg, m3): the independent route
SI = {"mi": F("1609.344"), "yd": F("0.9144"), "ft": F("0.3048"), "in": F("0.0254"), "cm": F("0.01"),
      "mm": F("0.001"), "km": F(1000), "m": F(1), "week": F(604800), "day": F(86400), "h": F(3600), "min": F(60),
      "s": F(1), "lb": F("0.45359237"), "oz": F("0.028349523125"), "g": F("0.001"), "mg": F("0.000001"),
      "t": F(1000), "kg": F(1), "gal": F("0.003785411784"), "qt": F("0.000946352946"), "pt": F("0.000473176473"),
      "cup": F("0.0002365882365"), "fl oz": F("0.0000295735295625"), "L": F("0.001"), "mL": F("0.000001"),
      "m3": F(1)}
DIMENSION = {u: dim for dim, (units, _) in (("length", CHAINS["length_imperial"]), ("length", CHAINS["length_metric"]),
                                            ("time", CHAINS["time"]), ("mass", CHAINS["mass"]),
                                            ("mass", CHAINS["mass_metric"]), ("volume", CHAINS["volume_us"]),
                                            ("volume", CHAINS["volume_metric"])) for u in units}


def make_units(rng: np.random.Generator, lang: str, difficulty: int) -> MathProblem:
    units, factors = CHAINS[choice(rng, tuple(CHAINS))]
    hops = min(difficulty + 1, len(factors))
    i = int(rng.integers(0, len(factors) - hops + 1))
    path = list(range(i, i + hops + 1))
    down = bool(rng.random() < 0.6)      # big -> small multiplies; small -> big divides
    if not down:
        path = path[::-1]
    q = F(int(rng.integers(1, 10 ** difficulty + 1)), 1)
    if difficulty > 1 and rng.random() < 0.5:
        q = q / 4 if rng.random() < 0.5 else q / 10
    steps, value, prev = [], q, lit(q)
    for a, b in zip(path, path[1:]):
        big, small = min(a, b), max(a, b)
        f = factors[big]
        value = value * f if down else value / f
        op = "*" if down else "/"
        steps.append(Step(t("convert_to", lang, u=units[b], big=units[big], f=fmt(f), small=units[small]),
                          f"{prev} {op} {lit(f)}", value, unit=units[b]))
        prev = f"s{len(steps)}"
    problem = t("q_units", lang, q=fmt(q), a=units[path[0]], c=units[path[-1]])
    return MathProblem("units.chain", lang, difficulty, problem, steps, [value],
                       {"quantity": str(q), "from": units[path[0]], "to": units[path[-1]]})


def check_units(p: MathProblem) -> list[Fraction]:
    """Independent answer: through SI definitions in one step, after checking the dimensions agree."""
    a, c = p.data["from"], p.data["to"]
    if DIMENSION[a] != DIMENSION[c]:
        raise ValueError(f"{a} and {c} measure different things")
    return [F(p.data["quantity"]) * SI[a] / SI[c]]
