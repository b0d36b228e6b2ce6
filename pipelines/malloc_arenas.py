"""Fewer glibc malloc arenas for every process of a job.

glibc gives each thread that allocates its own arena (up to 8 per core). A Beam worker runs gRPC,
Arrow and bundle threads; each arena keeps freed pages it cannot hand back, so a worker's resident
memory grows with the number of threads that ever allocated, not with what it holds. Two arenas
cut the largest images worker from ~1.52 to ~1.36 GB at the same wall time (bench/scale.py).

The limit must be in place before a process's first malloc, so it is set in the environment, where
Beam's worker processes, Dask's local workers and the crawler's extract workers inherit it; this
process, already running, gets it through mallopt. A value the user set is kept.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

ENV = "MALLOC_ARENA_MAX"
DEFAULT = 2
_M_ARENA_MAX = -8  # mallopt parameter number, from glibc's malloc.h


def limit_malloc_arenas(default: int = DEFAULT) -> int | None:
    """Sets MALLOC_ARENA_MAX for child processes (unless set) and applies it here; -> the limit, or
    None where the C library is not glibc (the variable is then harmless and ignored)."""
    value = os.environ.setdefault(ENV, str(default))
    if not sys.platform.startswith("linux"):
        return None
    try:
        limit = int(value)
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (ValueError, OSError, AttributeError):
        return None
    if limit < 1 or mallopt(_M_ARENA_MAX, limit) != 1:
        return None
    return limit
