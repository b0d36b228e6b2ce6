"""Verified synthetic math: step verifier labels, independent answer checks, drops, determinism."""
from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from synth import math_items
from synth.math_items import FAMILIES, generate_problem, make_math_item, verify_problem
from synth.math_lang import LANGUAGES
from synth.math_tables import parse_markdown_table
from synth.tables_core import to_markdown
from synth.math_steps import Step, check_steps, corrupt_step, render_steps


def _problems(n_per_family=4):
    return [generate_problem(7, i, None, (fam,)) for fam in FAMILIES for i in range(n_per_family)]


def test_every_family_verifies_in_every_language():
    for fam in FAMILIES:
        for lang in LANGUAGES:
            p = generate_problem(11, 0, (lang,), (fam,))
            drop, labels, checks = verify_problem(p)
            assert drop is None and all(labels), (fam, lang, drop, checks)
            assert p.language == lang and checks["independent_answer"]


def test_step_verifier_rejects_a_wrong_step():
    steps = [Step("add", "3 + 4", Fraction(7)), Step("double", "s1 * 2", Fraction(15)), Step("half", "s2 / 2", Fraction(15, 2))]
    # step 2 is wrong; step 3 is right given what step 2 stated (process labels are local)
    assert check_steps(steps) == [True, False, True]
    assert render_steps(steps)[2] == "half: 15 / 2 = 7.5"


def test_corrupted_steps_are_labelled_where_they_were_corrupted():
    rng = np.random.default_rng(0)
    for p in _problems():
        bad, k = corrupt_step(rng, p.steps)
        labels = check_steps(bad)
        assert labels[k] is False and labels.count(False) == 1, (p.family, k, labels)


def test_independent_route_catches_a_wrong_answer_and_a_misprinted_table():
    p = generate_problem(3, 0, ("en",), ("system",))
    p.answer = [p.answer[0] + 1, p.answer[1]]
    assert verify_problem(p)[0] == "answer_mismatch"
    for i in range(40):  # a total over all rows: change one printed value of its column
        p = generate_problem(3, i, ("en",), ("tables",))
        if p.data["op"] == "total" and not p.data["where"]:
            break
    assert verify_problem(p)[0] is None
    grid = parse_markdown_table(p.problem)
    j = grid[0].index(p.data["col"])
    printed = to_markdown(grid)
    grid[1][j] = "99999"
    p.problem = p.problem.replace(printed, to_markdown(grid))
    assert verify_problem(p)[0] == "answer_mismatch"


def test_crashing_or_slow_verifier_drops_the_item(monkeypatch):
    def crash(p):
        raise ZeroDivisionError("boom")

    def slow(p):
        time.sleep(3)
        return p.answer

    monkeypatch.setitem(math_items.CHECKERS, "units", crash)
    item = make_math_item(5, 0, families=("units",))
    assert item.row is None and item.drop == "verifier_error:ZeroDivisionError" and not item.process_rows
    monkeypatch.setitem(math_items.CHECKERS, "units", slow)
    t0 = time.perf_counter()
    item = make_math_item(5, 0, families=("units",), time_limit_s=0.3)
    assert item.row is None and item.drop == "verifier_timeout" and time.perf_counter() - t0 < 2.5


def test_items_are_deterministic_and_carry_process_rows():
    a, b = make_math_item(9, 4), make_math_item(9, 4)
    assert a.row == b.row and a.process_rows == b.process_rows
    clean, corrupt = a.process_rows
    assert all(s["correct"] for s in clean["steps"]) and not all(s["correct"] for s in corrupt["steps"])
    assert a.row["text"].startswith(a.row["problem"]) and a.row["answer"] in a.row["text"]
