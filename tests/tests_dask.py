"""Start and stop a real `dask scheduler` + `dask worker` processes on 127.0.0.1 for tests."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASK = os.path.join(os.path.dirname(sys.executable), "dask")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env(extra_path: str | None = None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, ROOT, env.get("PYTHONPATH")) if p)
    return env


@contextlib.contextmanager
def start_cluster(workdir: str, nworkers: int = 2, extra_path: str | None = None, hide: str | None = None):
    """`hide`: the workers run in a mount namespace of their own where that directory is an empty
    tmpfs, as if on another machine (needs `unshare -m`: see can_hide())."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = worker_env(extra_path)
    log = open(os.path.join(workdir, "dask.log"), "ab")
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              env=env, cwd=workdir, stdout=log, stderr=log, start_new_session=True)]
    try:
        wrap = (["unshare", "-m", "--propagation", "private", "sh", "-c", 'mount -t tmpfs hidden "$1" && shift && '
                 'exec "$@"', "sh", hide] if hide else [])
        procs.append(subprocess.Popen(
            [*wrap, DASK, "worker", f"tcp://{address}", "--nworkers", str(nworkers), "--nthreads", "1", "--host",
             "127.0.0.1", "--no-dashboard", "--local-directory", workdir],
            env=env, cwd=workdir, stdout=log, stderr=log, start_new_session=True))
        from dask.distributed import Client
        with Client(f"tcp://{address}", timeout=60) as c:
            c.wait_for_workers(nworkers, timeout=90)
        yield address
    finally:
        for p in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        log.close()


def can_hide() -> bool:
    """Whether this machine lets a process mount a tmpfs in a private mount namespace."""
    try:
        return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs x /mnt"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def worker_pids(address: str) -> dict[str, int]:
    from dask.distributed import Client
    with Client(f"tcp://{address}", timeout=30) as c:
        return c.run(os.getpid)


def wait_until(pred, timeout: float = 60.0, step: float = 0.05) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return False
