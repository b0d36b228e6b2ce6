"""A process and its descendants, read from /proc: CPU seconds and resident memory of a whole
tree (browsers, Beam workers), which `resource.getrusage` cannot see until the children exit."""
from __future__ import annotations

import os
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
