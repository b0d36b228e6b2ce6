"""One verified code item: a function with tests, kept only when the tests pass when run.

`make_code_item(seed, index)` draws a task (code_tasks.py), a name and parameters, and a
candidate solution the way a code generator would produce it: usually correct, sometimes
buggy (`buggy_share`), and for tasks that have one, sometimes a correct but too slow version.
The tests assert the oracle's values on generated inputs and edge cases. In the sandbox:
1. the candidate with its tests must exit cleanly (else dropped: tests_failed, or the
   sandbox status: timeout, cpu_limit, memory_limit, blocked, ...);
2. a known buggy variant with the same tests must fail (else dropped: tests_too_weak), so a
   kept item's tests are shown to tell a wrong function from a right one.
"""
from __future__ import annotations

import copy
import json
import time
from typing import Any

from synth.code_tasks import TASKS, Task
from synth.rng import choice, item_id, item_rng
from synth.sandbox import SandboxLimits, run_python
from synth.verified_item import VerifiedItem, eval_key

DEFAULT_LIMITS = SandboxLimits(wall_s=4.0, cpu_s=2, memory_mb=256, file_mb=1)
BUGGY_SHARE = 0.2
SLOW_SHARE = 0.35      # of the items of a task that has a slow variant


def _fill(template: str, name: str, params: dict) -> str:
    out = template.replace("{name}", name)
    for k, v in params.items():
        out = out.replace("{" + k + "}", str(v))
    return out


def function_source(task: Task, name: str, params: dict, body: str) -> str:
    return f'def {name}({task.args}):\n    """{_fill(task.doc, name, params)}"""\n{_fill(body, name, params)}\n'


def test_source(name: str, cases: list[tuple[tuple, Any]]) -> str:
    return "\n".join(f"assert {name}({', '.join(repr(a) for a in args)}) == {want!r}" for args, want in cases) + "\n"


def _status_reason(res) -> str:
    if res.status == "error" and "AssertionError" in res.stderr:
        return "tests_failed"
    return f"sandbox:{res.status}"


def make_code_item(seed: int, index: int, families=None, limits: SandboxLimits | None = None,
                   buggy_share: float = BUGGY_SHARE) -> VerifiedItem:
    t0 = time.perf_counter()
    rid = item_id("code", seed, index)
    rng = item_rng(seed, "code", index)
    tasks = [t for t in TASKS if not families or t.family in families or t.category in families]
    task = choice(rng, tasks)
    params = task.params(rng)
    name = choice(rng, task.names)
    r = float(rng.random())
    candidate = "slow" if task.slow and r < SLOW_SHARE else ("buggy" if r < buggy_share else "correct")
    body = choice(rng, {"slow": task.slow, "buggy": task.bugs, "correct": task.solutions}[candidate])
    mutant = choice(rng, task.bugs)
    family = f"code.{task.category}.{task.family}"
    counters = {f"candidate:{candidate}": 1}
    try:
        inputs = task.inputs(rng, params)
        cases = [(args, task.oracle(params, *copy.deepcopy(args))) for args in inputs]
    except Exception as e:  # noqa: BLE001  (a broken task drops one item, never the run)
        return VerifiedItem(rid, None, f"oracle_error:{type(e).__name__}", sample={"family": family, "error": str(e)[:200]},
                            counters=counters)
    spec = f'def {name}({task.args}):\n    """{_fill(task.doc, name, params)}"""'
    tests = test_source(name, cases)
    program = function_source(task, name, params, body) + "\n\n" + tests
    lim = limits or DEFAULT_LIMITS
    res = run_python(program, lim)
    item = VerifiedItem(rid, None, None, eval_key=eval_key(spec + "\n" + tests), counters=counters)
    checks: dict[str, Any] = {"candidate": candidate, "tests": len(cases),
                              "sandbox": {"status": res.status, "wall_s": res.wall_s, "layers": res.layers}}
    if not res.ok:
        item.drop = _status_reason(res)
        item.sample = {"family": family, "candidate": candidate, "status": res.status, "blocked": res.blocked,
                       "stderr_tail": res.stderr[-300:], "program": program[:600]}
        counters[f"caught:{candidate}"] = 1
    else:
        mut = run_python(function_source(task, name, params, mutant) + "\n\n" + tests, lim)
        checks["mutant"] = {"status": mut.status, "reason": _status_reason(mut) if not mut.ok else "passed"}
        if mut.ok:
            item.drop = "tests_too_weak"
            item.sample = {"family": family, "program": program[:600], "mutant": _fill(mutant, name, params)}
        else:
            counters[f"kept:{candidate}"] = 1
            item.row = {"id": rid, "kind": "code", "family": family, "language": "en", "difficulty": task.difficulty,
                        "text": program, "problem": spec, "answer": function_source(task, name, params, body),
                        "steps": [], "checks_json": json.dumps(checks, sort_keys=True),
                        "meta_json": json.dumps({"seed": seed, "index": index, "params": params, "name": name,
                                                 "programming_language": "python"}, sort_keys=True)}
    item.seconds = time.perf_counter() - t0
    return item
