"""A process and its descendants, read from /proc: CPU seconds and resident memory of a whole
tree (browsers, Beam workers), which `resource.getrusage` cannot see until the children exit."""
from __future__ import annotations

import os
import resource
import subprocess
import time
from collections import defaultdict


def _table() -> dict[int, tuple[int, float, int]]:
    """pid -> (parent pid, CPU seconds incl. reaped children, RSS bytes) for every live process."""
    tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(d)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / tick, int(fields[21]) * page)
        except (OSError, IndexError, ValueError):
            continue
    return out


def pss_bytes(pid: int) -> int | None:
    """Proportional set size: resident pages with each shared page split among the processes
    that map it (/proc/PID/smaps_rollup), so that a tree's sum counts a page once where the RSS
    sum counts it in every process (Dask workers forked from one server share its imports).
    None where the file cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _descendants(root: int, table) -> list[int]:
    children = defaultdict(list)
    for pid, (ppid, _, _) in table.items():
        children[ppid].append(pid)
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def children_cpu(root: int | None = None) -> float:
    """CPU seconds of the descendants of `root` (default: this process), live ones and those they reaped."""
    t = _table()
    return sum(t[p][1] for p in _descendants(os.getpid() if root is None else root, t))


def tree_rss_mb(root: int) -> float:
    """Summed RSS of process `root` and all its descendants, in MiB."""
    t = _table()
    return sum(t[p][2] for p in [root, *_descendants(root, t)] if p in t) / 2**20


def compile_bytecode(repo) -> None:
    """Write the project's bytecode caches before timing anything: the peers come from pip, which
    compiles their modules at install, while ours run from the source tree, and an environment
    with PYTHONDONTWRITEBYTECODE set (as this project's machines have) would recompile every module
    in every timed run (~0.07 CPU-s per process). Same warm-up for every side."""
    import compileall
    from pathlib import Path
    for pkg in ("corpus", "crawl", "filters", "pipelines", "imagetext", "synth", "training", "inference", "datatools"):
        if (Path(repo) / pkg).is_dir():
            compileall.compile_dir(str(Path(repo) / pkg), quiet=1)


def timed_child(cmd, env=None) -> dict:
    """Run `cmd` to completion: CPU-seconds of its whole process tree (every descendant is reaped
    before it exits, so RUSAGE_CHILDREN counts them all), wall seconds, the tree's peak RSS
    (sampled from /proc every 0.1 s) and its stdout. Single-threaded BLAS for every tool alike."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.1)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd[:3]))} failed:\n{stderr[-3000:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak, "stdout": stdout}


def median_row(runs: list[dict], n_docs: int) -> dict:
    """One tool's rounds of `timed_child` results -> its table row: median CPU-s and wall s, docs per
    CPU-second from the median, the largest peak RSS, and every round's CPU-s (so spread is visible)."""
    import statistics
    cpu = statistics.median(r["cpu_s"] for r in runs)
    return {"cpu_s": cpu, "docs_per_cpu_s": n_docs / cpu, "wall_s": statistics.median(r["wall_s"] for r in runs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "rounds_cpu_s": [r["cpu_s"] for r in runs]}
