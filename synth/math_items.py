"""One verified math item: generate a problem, check every step and the answer, build the rows.

`make_math_item(seed, index)` returns a `VerifiedItem`: the training row when every step is
re-derived correct and the independent route (sympy / exact fractions / enumeration) agrees
with the answer, else a drop reason; plus the process-supervision rows (the clean solution and
a copy with one corrupted step, every step labelled by the step verifier). A verifier that
raises or runs past its time limit drops the item: nothing unverified is kept.
"""
from __future__ import annotations

import json
import signal
import threading
import time
from fractions import Fraction
from typing import Any, Callable

from synth.math_algebra import check_algebra, make_linear, make_quadratic, make_system
from synth.math_lang import LANGUAGES, t
from synth.math_probability import check_probability, make_probability
from synth.math_steps import MathProblem, StepError, answer_text, check_steps, corrupt_step, fmt, render_steps
from synth.math_tables import check_table_problem, make_table_problem
from synth.math_units import check_units, make_units
from synth.rng import choice, item_id, item_rng
from synth.verified_item import VerifiedItem, eval_key

FAMILIES: dict[str, Callable] = {"tables": lambda rng, lang, d: make_table_problem(rng, lang), "linear": make_linear,
                                 "quadratic": make_quadratic, "system": make_system, "units": make_units,
                                 "probability": make_probability}
CHECKERS = {"tables": check_table_problem, "algebra": check_algebra, "units": check_units,
            "probability": check_probability}
DEFAULT_TIME_LIMIT_S = 5.0


class VerifierTimeout(Exception):
    pass


def call_with_time_limit(fn: Callable, seconds: float):
    """fn() stopped by SIGALRM after `seconds` on the main thread; elsewhere (signals only reach
    the main thread) it runs to the end and a late result still counts as a timeout."""
    if threading.current_thread() is threading.main_thread():
        def on_alarm(signum, frame):
            raise VerifierTimeout()
        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    t0 = time.perf_counter()
    out = fn()
    if time.perf_counter() - t0 > seconds:
        raise VerifierTimeout()
    return out


def solution_text(p: MathProblem, lines: list[str], answer: list[Fraction]) -> str:
    body = "\n".join(f"{i + 1}. {ln}" for i, ln in enumerate(lines))
    return f"{p.problem}\n\n{t('solution', p.language)}\n{body}\n{t('answer', p.language)} {answer_text(answer)}"


def _row(rid: str, p: MathProblem, steps, labels, checks: dict, meta: dict) -> dict[str, Any]:
    lines = render_steps(steps)
    answer = stated_answer(p, steps)
    return {"id": rid, "kind": "math", "family": p.family, "language": p.language, "difficulty": p.difficulty,
            "text": solution_text(p, lines, answer), "problem": p.problem, "answer": answer_text(answer),
            "steps": [{"text": ln, "value": fmt(s.value), "correct": bool(ok)} for ln, s, ok in zip(lines, steps, labels)],
            "checks_json": json.dumps(checks, sort_keys=True), "meta_json": json.dumps(meta, sort_keys=True)}


def stated_answer(p: MathProblem, steps) -> list[Fraction]:
    """The final values a solution states: two roots, (x, y), or its last step."""
    if p.family in ("algebra.quadratic", "algebra.system") and len(steps) == len(p.steps):
        vals = [s.value for s in steps[-2:]]
        return sorted(set(vals)) if p.family == "algebra.quadratic" else vals
    return [steps[-1].value]


def generate_problem(seed: int, index: int, languages=None, families=None) -> MathProblem:
    rng = item_rng(seed, "math", index)
    fam = choice(rng, tuple(families or FAMILIES))
    lang = choice(rng, tuple(languages or LANGUAGES))
    difficulty = int(rng.integers(1, 4))
    return FAMILIES[fam](rng, lang, difficulty)


def verify_problem(p: MathProblem, time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> tuple[str | None, list[bool], dict]:
    """(drop reason or None, step labels, checks record)."""
    try:
        labels = check_steps(p.steps)
    except StepError as e:
        return f"verifier_error:step:{type(e).__name__}", [], {"error": str(e)}
    if not all(labels):
        return "wrong_step", labels, {"first_wrong_step": labels.index(False) + 1}
    checker = CHECKERS[p.family.split(".")[0]]
    route = checker.__module__.rsplit(".", 1)[-1] + "." + checker.__name__
    try:
        independent = call_with_time_limit(lambda: checker(p), time_limit_s)
    except VerifierTimeout:
        return "verifier_timeout", labels, {"route": route, "limit_s": time_limit_s}
    except Exception as e:  # noqa: BLE001  (a crashing verifier drops the item, it never keeps it)
        return f"verifier_error:{type(e).__name__}", labels, {"route": route, "error": str(e)[:200]}
    got, want = answer_text(sorted(independent)), answer_text(sorted(p.answer))
    checks = {"route": route, "independent_answer": got, "steps_checked": len(labels)}
    if got != want:
        return "answer_mismatch", labels, checks
    return None, labels, checks


def warm_up() -> None:
    """Run every checker once (sympy builds caches on its first solve) so that start-up time is
    not charged to the first item's time limit."""
    for i, fam in enumerate(FAMILIES):
        verify_problem(generate_problem(0, i, ("en",), (fam,)), time_limit_s=600)


def make_math_item(seed: int, index: int, languages=None, families=None, process: bool = True,
                   time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> VerifiedItem:
    t0 = time.perf_counter()
    rid = item_id("math", seed, index)
    try:
        p = generate_problem(seed, index, languages, families)
    except Exception as e:  # noqa: BLE001  (a generator bug drops one item, never the run)
        return VerifiedItem(rid, None, f"generator_error:{type(e).__name__}", sample={"error": str(e)[:200]})
    drop, labels, checks = verify_problem(p, time_limit_s)
    meta = {"seed": seed, "index": index, **{k: v for k, v in p.data.items() if k != "equations"}}
    item = VerifiedItem(rid, None, drop, eval_key=eval_key(p.problem))
    if drop:
        item.sample = {"family": p.family, "problem": p.problem[:400], **checks}
    else:
        item.row = _row(rid, p, p.steps, labels, checks, meta)
        if process:
            item.process_rows.append(_row(f"{rid}-clean", p, p.steps, labels, checks, {**meta, "corrupted_step": None}))
            bad, k = corrupt_step(item_rng(seed, "math-process", index), p.steps)
            bad_labels = check_steps(bad)
            final_ok = stated_answer(p, bad) == stated_answer(p, p.steps)
            item.process_rows.append(_row(f"{rid}-corrupt", p, bad, bad_labels, {**checks, "final_correct": final_ok},
                                          {**meta, "corrupted_step": k + 1}))
    item.seconds = time.perf_counter() - t0
    return item
