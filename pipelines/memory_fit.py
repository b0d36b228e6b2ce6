"""Will the local engine's rows fit in memory? A one-line error before anything is written,
instead of the kernel's OOM killer an hour into a job.

The local engine (pipelines/text_local.py) holds every scored row until the corpus-wide
decisions are made, then builds the output tables: its peak grows with the input. Measured on
12,000 documentation pages (65 MB of the columns it reads): 327 MB peak for [input, dedup],
323 MB for the four-filter chain, about 270 MB more with `--workers 2`. With worker processes the
rows are held in the workers (pipelines/text_held.py), each beside its own interpreter, libraries
and Arrow tables: the 28,534-document [input, dedup] job (144 MB read) peaked at 592 MB in one
process and 1.0-1.1 GB summed over the parent and 2 workers (2026-12-07). The estimate below is
deliberately above those (base 250 MB + 4 bytes per byte of the columns read + 400 MB per extra
worker: 1.23 GB there), so it refuses only jobs that would not fit; `--no-memory-check` runs
anyway. Inputs on object storage are not checked.

Available memory is the smaller of the kernel's MemAvailable and what the cgroup (a container's
memory limit) has left besides its page cache, when either can be read.
"""
from __future__ import annotations

from corpus import objectstore
from corpus.errors import ConfigError

BASE_BYTES = 250 << 20
BYTES_PER_INPUT_BYTE = 4
BYTES_PER_EXTRA_WORKER = 400 << 20


def available_memory(meminfo: str = "/proc/meminfo", cgroup: str = "/sys/fs/cgroup") -> int | None:
    """Bytes this process can still allocate, or None when nothing can be read (not Linux)."""
    found = []
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError):
        pass
    try:  # cgroup v2: the limit less what the group uses, its page cache (reclaimable) not counted
        with open(f"{cgroup}/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        if limit != "max":
            with open(f"{cgroup}/memory.current", encoding="ascii") as f:
                used = int(f.read().strip())
            with open(f"{cgroup}/memory.stat", encoding="ascii") as f:
                stat = dict(line.split()[:2] for line in f if line.strip())
            used -= int(stat.get("file", 0))
            found.append(max(0, int(limit) - max(0, used)))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def input_bytes(dataset, columns: list[str]) -> int | None:
    """Bytes of the columns the engine reads, from a local dataset's record batches (memory-mapped:
    only their metadata is read, ~0.04 CPU-s for 12,000 pages); a crawl's pages also hold their
    HTML, which the text job never reads. None for a dataset on object storage (the check would
    download it)."""
    if objectstore.is_remote(dataset.directory):
        return None
    return sum(batch.nbytes for batch in dataset.iter_batches(columns=columns))


def local_peak_estimate(read_bytes: int, workers: int = 1) -> int:
    return BASE_BYTES + BYTES_PER_INPUT_BYTE * int(read_bytes) + BYTES_PER_EXTRA_WORKER * max(0, workers - 1)


def workers_that_fit(read_bytes: int | None, most: int, available: int | None = None) -> int:
    """How many local-engine processes (1..most) the estimate lets this machine hold; `most` when
    nothing can be measured (an input on object storage, no /proc)."""
    if read_bytes is None:
        return most
    available = available_memory() if available is None else available
    if available is None:
        return most
    extra = (available - local_peak_estimate(read_bytes, 1)) // BYTES_PER_EXTRA_WORKER
    return int(max(1, min(most, 1 + extra)))


def check_local_fits(pages_dir: str, read_bytes: int | None, workers: int = 1, available: int | None = None) -> None:
    """Raise ConfigError when the local engine's estimated peak exceeds the memory available."""
    if read_bytes is None:
        return
    available = available_memory() if available is None else available
    need = local_peak_estimate(read_bytes, workers)
    if available is not None and need > available:
        raise ConfigError(
            f"text: the local engine holds every row in memory: about {need / 2**30:.1f} GB for {pages_dir} "
            f"({read_bytes / 2**30:.2f} GB of the columns it reads), but {available / 2**30:.1f} GB is available; spread the "
            "job over Dask workers (--runner dask, see the README's 'Running on a cluster'), split the input, "
            "or pass --no-memory-check to run it anyway")
