"""Verified synthetic math and code: items per second, verified share and drop reasons.

One run prints, side by side:
- math: generation alone vs generation + verification (every step re-derived, answer by an
  independent route), items per CPU-second of this process; verified share; drop reasons
  (decontamination against the held-out split included); the step verifier on the process
  split (corrupted steps flagged, clean steps wrongly flagged);
- code: the sandboxed check (candidate + a buggy variant, each a limited child) started by the
  fork server vs by a fresh interpreter per run (same items, same outcome expected) vs the same
  tests exec'd in this process without any sandbox (the unsafe baseline), items per wall-second
  and per CPU-second including the children; verified share; drop reasons; buggy candidates
  caught and kept;
- hostile samples: what the sandbox did with a fork bomb, an endless loop, a sleeper, a memory
  hog, an oversized file, a write outside its directory and a loopback connection.

    .venv/bin/python bench/continued_synth.py [--math 300] [--code 60] [--rounds 3]

Writes bench/results/continued_synth.json (bench/continued.py's "Synthetic math and code" table).
"""
from __future__ import annotations

import argparse
import collections
import os
import resource
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _children_cpu() -> float:
    """CPU of our reaped children, plus the fork server and the children it reaped (its children
    are not ours, so RUSAGE_CHILDREN misses them)."""
    from synth import sandbox
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = r.ru_utime + r.ru_stime
    for server in sandbox.SERVERS:
        proc = server._proc
        if proc is not None and proc.poll() is None:
            with open(f"/proc/{proc.pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def bench_math(n: int, rounds: int, seed: int) -> dict:
    from pipelines.verified_synth_pipeline import Decontaminator, VerifiedConfig
    from synth.math_items import generate_problem, make_math_item, warm_up
    warm_up()
    decon = Decontaminator(VerifiedConfig("math", n))
    gen_rates, ver_rates, walls = [], [], []
    items = []
    for r in range(rounds):
        c0 = time.process_time()
        for i in range(n):
            generate_problem(seed, i)
        gen_rates.append(n / max(time.process_time() - c0, 1e-9))
        c0, w0 = time.process_time(), time.perf_counter()
        items = [make_math_item(seed, i) for i in range(n)]
        ver_rates.append(n / max(time.process_time() - c0, 1e-9))
        walls.append(n / max(time.perf_counter() - w0, 1e-9))
    drops = collections.Counter()
    families, languages = collections.Counter(), collections.Counter()
    corrupted = flagged = clean_steps = false_alarms = 0
    for it in items:
        reason = it.drop or decon.reason(it.eval_key, it.row["problem"])
        if reason:
            drops[reason] += 1
            continue
        families[it.row["family"]] += 1
        languages[it.row["language"]] += 1
        for pr in it.process_rows:
            labels = [s["correct"] for s in pr["steps"]]
            if pr["id"].endswith("-corrupt"):
                corrupted += 1
                flagged += labels.count(False) == 1
            else:
                clean_steps += len(labels)
                false_alarms += labels.count(False)
    kept = n - sum(drops.values())
    return {"n": n, "rounds": rounds, "seed": seed,
            "generate_only_items_per_cpu_s": round(statistics.median(gen_rates), 1),
            "verified_items_per_cpu_s": round(statistics.median(ver_rates), 1),
            "verified_items_per_wall_s": round(statistics.median(walls), 1),
            "kept": kept, "verified_share": round(kept / n, 4), "drops": dict(drops),
            "families": dict(sorted(families.items())), "languages": dict(sorted(languages.items())),
            "process": {"corrupted_solutions": corrupted, "corrupted_step_flagged": flagged,
                        "clean_steps": clean_steps, "clean_steps_flagged": false_alarms}}


def _in_process_check(d) -> bool:
    """The unsafe baseline: the same program exec'd here, no limits (our own templates only)."""
    from synth.code_items import function_source
    ns: dict = {}
    try:
        exec(function_source(d.task, d.name, d.params, d.body) + "\n" + d.tests, ns)  # noqa: S102
        return True
    except Exception:  # noqa: BLE001
        return False


def bench_code(n: int, seed: int) -> dict:
    from pipelines.verified_synth_pipeline import Decontaminator, VerifiedConfig
    from synth.code_items import draft_code_item, make_code_item
    decon = Decontaminator(VerifiedConfig("code", n))
    drafts = [draft_code_item(seed, i) for i in range(n)]
    c0, w0 = time.process_time(), time.perf_counter()
    base = [_in_process_check(d) if d.candidate != "slow" else False for d in drafts]
    base_cpu, base_wall = time.process_time() - c0, time.perf_counter() - w0
    from synth.sandbox import run_python
    c0, k0, w0 = time.process_time(), _children_cpu(), time.perf_counter()
    fresh = [make_code_item(seed, i, runner=run_python) for i in range(n)]
    fresh_cpu = time.process_time() - c0 + _children_cpu() - k0
    fresh_wall = time.perf_counter() - w0
    make_code_item(seed, n + 1)  # starts the fork server outside the timed loop
    c0, k0, w0 = time.process_time(), _children_cpu(), time.perf_counter()
    items = [make_code_item(seed, i) for i in range(n)]
    cpu = time.process_time() - c0 + _children_cpu() - k0
    wall = time.perf_counter() - w0
    same = sum((a.drop, a.row) == (b.drop, b.row) for a, b in zip(fresh, items))
    differ = [{"id": a.id, "candidate": d.candidate, "fresh": a.drop or "kept", "fork_server": b.drop or "kept"}
              for a, b, d in zip(fresh, items, drafts) if (a.drop, a.row) != (b.drop, b.row)]
    drops, counters = collections.Counter(), collections.Counter()
    for it in items:
        reason = it.drop or decon.reason(it.eval_key, it.row["problem"])
        counters.update({k: v for k, v in it.counters.items() if not (reason and k.startswith("kept:"))})
        if reason:
            drops[reason] += 1
    kept = n - sum(drops.values())
    return {"n": n, "seed": seed, "kept": kept, "verified_share": round(kept / n, 4), "drops": dict(drops),
            "sandboxed_items_per_wall_s": round(n / wall, 2), "sandboxed_items_per_cpu_s": round(n / cpu, 2),
            "fresh_interpreter_items_per_wall_s": round(n / fresh_wall, 2),
            "fresh_interpreter_items_per_cpu_s": round(n / fresh_cpu, 2),
            "same_outcome_fork_server_vs_fresh": f"{same}/{n}", "differ": differ,
            "in_process_items_per_wall_s": round(sum(1 for d in drafts if d.candidate != "slow") / max(base_wall, 1e-9), 1),
            "in_process_cpu_s": round(base_cpu, 4), "in_process_passed": sum(base),
            "candidates": {k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("candidate:")},
            "caught": {k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("caught:")},
            "kept_by_candidate": {k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("kept:")}}


def bench_hostile(run=None) -> list[dict]:
    from synth.sandbox import SandboxLimits, run_python
    run = run or run_python
    lim = SandboxLimits(wall_s=3.0, cpu_s=1, memory_mb=256, file_mb=1)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    samples = {
        "fork bomb": "import os\nwhile True:\n    os.fork()",
        "endless loop": "while True:\n    pass",
        "sleeper": "import time\ntime.sleep(600)",
        "memory hog": "xs = []\nwhile True:\n    xs.append(bytearray(10**7))",
        "oversized file": "open('big', 'wb').write(b'x' * (64 << 20))",
        "write outside": "open('/tmp/cidermill-bench-escape', 'w').write('x')",
        "loopback connection": f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)",
    }
    out = []
    for what, src in samples.items():
        res = run(src, lim)
        try:
            os.killpg(res.pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        out.append({"sample": what, "status": res.status, "wall_s": res.wall_s, "blocked": res.blocked[:1],
                    "outlived_limit": alive, "layers": res.layers})
    try:
        srv.accept()
        connected = True
    except OSError:
        connected = False
    srv.close()
    escaped = os.path.exists("/tmp/cidermill-bench-escape")
    for row in out:
        if row["sample"] == "loopback connection":
            row["reached_server"] = connected
        if row["sample"] == "write outside":
            row["file_written"] = escaped
    return out


def run(math_n: int = 300, code_n: int = 60, rounds: int = 3, seed: int = 0, save: bool = True) -> dict:
    """Measure, print the tables and (save=True) write bench/results/continued_synth.json; returns
    the payload. bench/continued.py calls this for its "Synthetic math and code" table."""
    from bench.results import save_result, start_conditions
    start = start_conditions()
    m = bench_math(math_n, rounds, seed)
    c = bench_code(code_n, seed)
    h = bench_hostile()
    from synth.sandbox import ForkServer
    server = ForkServer()
    h_fork = bench_hostile(server.run)
    server.close()

    print(f"\nSynthetic math ({m['n']} items, median of {m['rounds']} rounds; load at start {start['loadavg'][0]:.1f})")
    print(f"  {'generate only':<34}{m['generate_only_items_per_cpu_s']:>10} items/CPU-s")
    print(f"  {'generate + verify':<34}{m['verified_items_per_cpu_s']:>10} items/CPU-s"
          f"   ({m['verified_items_per_wall_s']} items/wall-s)")
    print(f"  verified and kept: {m['kept']}/{m['n']} ({m['verified_share']:.1%}); drops: {m['drops'] or 'none'}")
    p = m["process"]
    print(f"  process split: corrupted step flagged in {p['corrupted_step_flagged']}/{p['corrupted_solutions']} "
          f"solutions; clean steps flagged {p['clean_steps_flagged']}/{p['clean_steps']}")
    print(f"  languages: {m['languages']}")
    print(f"\nSynthetic code ({c['n']} items)")
    print(f"  {'sandbox, fork server':<40}{c['sandboxed_items_per_wall_s']:>8} items/wall-s "
          f"{c['sandboxed_items_per_cpu_s']:>8} items/CPU-s (children included)")
    print(f"  {'sandbox, fresh interpreter per run':<40}{c['fresh_interpreter_items_per_wall_s']:>8} items/wall-s "
          f"{c['fresh_interpreter_items_per_cpu_s']:>8} items/CPU-s   same outcome: "
          f"{c['same_outcome_fork_server_vs_fresh']} {c['differ'] or ''}")
    print(f"  {'in-process exec, no sandbox (unsafe)':<40}{c['in_process_items_per_wall_s']:>8} items/wall-s")
    print(f"  verified and kept: {c['kept']}/{c['n']} ({c['verified_share']:.1%}); drops: {c['drops']}")
    print(f"  candidates {c['candidates']}, caught {c['caught']}, kept {c['kept_by_candidate']}")
    print("\nHostile samples (limits: 3 s wall, 1 CPU-s, 256 MiB, 1 MiB files); fresh interpreter | fork server")
    for row, frow in zip(h, h_fork):
        extra = {k: row[k] for k in ("reached_server", "file_written") if k in row}
        fextra = {k: frow[k] for k in ("reached_server", "file_written") if k in frow}
        print(f"  {row['sample']:<22}{row['status']:<14}{row['wall_s']:>6.2f} s blocked={row['blocked']} "
              f"outlived={row['outlived_limit']} {extra or ''}| {frow['status']:<14}{frow['wall_s']:>6.2f} s "
              f"outlived={frow['outlived_limit']} {fextra or ''}")

    buggy = c["candidates"].get("buggy", 0)
    headline = [
        {"what": "verified math items per CPU-second (generate, re-derive every step, independent check)",
         "figure": f"{m['verified_items_per_cpu_s']} (generation alone {m['generate_only_items_per_cpu_s']})",
         "target": "none set"},
        {"what": f"math verified share of {m['n']} generated (drop reasons)",
         "figure": f"{m['verified_share']:.1%} ({', '.join(f'{k} {v}' for k, v in sorted(m['drops'].items())) or 'none'})",
         "target": "only verified items kept"},
        {"what": "process split: corrupted step flagged / clean steps flagged",
         "figure": f"{p['corrupted_step_flagged']}/{p['corrupted_solutions']} / {p['clean_steps_flagged']}/{p['clean_steps']}",
         "target": "all / none"},
        {"what": "verified code items per wall-second: sandbox fork server / fresh interpreter per run / "
                 "in-process exec (unsafe)",
         "figure": f"{c['sandboxed_items_per_wall_s']} / {c['fresh_interpreter_items_per_wall_s']} / "
                   f"{c['in_process_items_per_wall_s']}", "target": "none set"},
        {"what": f"code verified share of {c['n']} generated (drop reasons)",
         "figure": f"{c['verified_share']:.1%} ({', '.join(f'{k} {v}' for k, v in sorted(c['drops'].items()))})",
         "target": "only passing items kept"},
        {"what": "buggy code candidates caught / kept",
         "figure": f"{c['caught'].get('buggy', 0)}/{buggy} / {c['kept_by_candidate'].get('buggy', 0)}",
         "target": "all / 0"},
        {"what": "hostile samples that outlived their limit, reached the network or wrote outside",
         "figure": f"{sum(r['outlived_limit'] or r.get('reached_server', False) or r.get('file_written', False) for r in h + h_fork)} of {len(h) + len(h_fork)} (both ways of starting a child)",
         "target": "0"},
    ]
    not_covered = ("Rates are single-process on a shared machine (math: CPU-seconds of this process; code: wall "
                   "and CPU including the sandbox children). The math drop rate reflects the generators' own "
                   "slips and the held-out exact-match check only; no external evaluation set ships with the "
                   "project, so eval-set n-gram decontamination is exercised by the tests, not measured here. "
                   "The hostile samples are a fixed set, not a proof that no escape exists.")
    payload = {"math": m, "code": c, "hostile": h, "hostile_fork_server": h_fork, "headline": headline,
               "not_covered": not_covered}
    if save:
        save_result("continued_synth", payload, packages=["sympy"], start=start)
    return payload


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--math", type=int, default=300, help="math items per round (default 300)")
    ap.add_argument("--code", type=int, default=60, help="code items (default 60; two sandbox runs each)")
    ap.add_argument("--rounds", type=int, default=3, help="math rounds; the median rate is reported")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    run(args.math, args.code, args.rounds, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
