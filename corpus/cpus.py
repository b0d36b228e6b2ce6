"""How many CPUs this process may use: the one answer every "one worker per core" default reads
(the crawler's extraction processes, the text job's `--workers auto`, synth's chart workers)."""
from __future__ import annotations

import math
import os


def usable_cpus(cpu_max: str = "/sys/fs/cgroup/cpu.max") -> int:
    """The affinity mask (taskset, cpusets) and a container's CPU quota (cgroup v2 cpu.max, e.g.
    `docker --cpus 2` on a 64-core host), whichever is smaller; os.cpu_count() counts neither."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    try:
        with open(cpu_max, encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            n = min(n, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    return max(1, n)
