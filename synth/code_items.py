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
from dataclasses import dataclass
from typing import Any

from synth.code_tasks import TASKS, Task
from synth.rng import choice, item_id, item_rng
from synth.sandbox import SandboxLimits, run_sandboxed
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


@dataclass
class CodeDraft:
    """A generated task instance before execution."""
    id: str
    family: str
    difficulty: int
    task: Task
    name: str
    params: dict
    candidate: str                 # correct | buggy | slow
    body: str
    mutant: str
    cases: list
    spec: str
    tests: str

    @property
    def eval_key(self) -> str:
        return eval_key(self.spec + "\n" + self.tests)


def draft_code_item(seed: int, index: int, families=None, buggy_share: float = BUGGY_SHARE) -> CodeDraft:
    rng = item_rng(seed, "code", index)
    tasks = [t for t in TASKS if not families or t.family in families or t.category in families]
    task = choice(rng, tasks)
    params = task.params(rng)
    name = choice(rng, task.names)
    r = float(rng.random())
    candidate = "slow" if task.slow and r < SLOW_SHARE else ("buggy" if r < buggy_share else "correct")
    body = choice(rng, {"slow": task.slow, "buggy": task.bugs, "correct": task.solutions}[candidate])
    mutant = choice(rng, task.bugs)
    cases = [(args, task.oracle(params, *copy.deepcopy(args))) for args in task.inputs(rng, params)]
    spec = f'def {name}({task.args}):\n    """{_fill(task.doc, name, params)}"""'
    return CodeDraft(item_id("code", seed, index), f"code.{task.category}.{task.family}", task.difficulty, task, name,
                     params, candidate, body, mutant, cases, spec, test_source(name, cases))


def make_code_item(seed: int, index: int, families=None, limits: SandboxLimits | None = None,
                   buggy_share: float = BUGGY_SHARE, runner=run_sandboxed) -> VerifiedItem:
    """runner: run_sandboxed (the fork server) or sandbox.run_python (a fresh interpreter per run)."""
    t0 = time.perf_counter()
    try:
        d = draft_code_item(seed, index, families, buggy_share)
    except Exception as e:  # noqa: BLE001  (a broken task drops one item, never the run)
        return VerifiedItem(item_id("code", seed, index), None, f"generator_error:{type(e).__name__}",
                            sample={"error": str(e)[:200]})
    counters = {f"candidate:{d.candidate}": 1}
    program = function_source(d.task, d.name, d.params, d.body) + "\n\n" + d.tests
    lim = limits or DEFAULT_LIMITS
    res = runner(program, lim)
    item = VerifiedItem(d.id, None, None, eval_key=d.eval_key, counters=counters)
    checks: dict[str, Any] = {"candidate": d.candidate, "tests": len(d.cases),
                              "sandbox": {"status": res.status, "layers": res.layers}}  # no timings: rows are reproducible
    if not res.ok:
        item.drop = _status_reason(res)
        item.sample = {"family": d.family, "candidate": d.candidate, "status": res.status, "blocked": res.blocked,
                       "stderr_tail": res.stderr[-300:], "program": program[:600]}
        counters[f"caught:{d.candidate}"] = 1
    else:
        mut = runner(function_source(d.task, d.name, d.params, d.mutant) + "\n\n" + d.tests, lim)
        checks["mutant"] = {"status": mut.status, "reason": _status_reason(mut) if not mut.ok else "passed"}
        if mut.ok:
            item.drop = "tests_too_weak"
            item.sample = {"family": d.family, "program": program[:600], "mutant": _fill(d.mutant, d.name, d.params)}
        else:
            counters[f"kept:{d.candidate}"] = 1
            item.row = {"id": d.id, "kind": "code", "family": d.family, "language": "en", "difficulty": d.difficulty,
                        "text": program, "problem": d.spec, "answer": function_source(d.task, d.name, d.params, d.body),
                        "steps": [], "checks_json": json.dumps(checks, sort_keys=True),
                        "meta_json": json.dumps({"seed": seed, "index": index, "params": d.params, "name": d.name,
                                                 "programming_language": "python"}, sort_keys=True)}
    item.seconds = time.perf_counter() - t0
    return item
