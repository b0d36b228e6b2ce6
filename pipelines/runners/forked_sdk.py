"""Beam's `multi_processing` workers forked from one process that has already imported what they need.

FnApiRunner's `--direct_running_mode=multi_processing` starts each SDK worker as a fresh
interpreter (`python -m apache_beam.runners.worker.sdk_worker_main`, through a shell). Each one
imports Beam, pyarrow, numpy and the job's modules before its first bundle: about 1.5 CPU-s a
worker, paid again for every Beam job of a command, on the same cores that the driver is using
to build the job. With `install`, a worker that Beam would start with exactly that command line is
instead forked from multiprocessing's forkserver, which imported those modules once
(runners/dask_fork.py does the same for local Dask workers).

What the worker does is unchanged: the same entry point (`sdk_worker_main.main`), the same
environment (Beam's variables naming the control and logging services and the pipeline options,
over this process's environment), the same gRPC services; Beam still waits for it, raises on a
non-zero exit and kills it if the job ends first. A worker command line that is not Beam's own (an
`--environment_config` the user gave) is started as Beam starts it. The hash seed does not
matter here: FnApiRunner groups by encoded key bytes in the runner process, not by `hash()`.

The hook is one name in one Beam module (`local_job_service.subprocess`, the module through which
`SubprocessSdkWorker.run` calls `Popen`); `uninstall` puts it back. A Beam release that moves it
only loses the speed: `install` then returns False and the workers are spawned as before.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterable

# what every SDK worker imports before its first bundle, whatever the job
PRELOAD = ("apache_beam", "apache_beam.runners.worker.sdk_worker_main", "pyarrow", "numpy", "xxhash",
           "corpus", "pipelines", "pipelines.shards_io", "pipelines.staged_rows")
WORKER_COMMAND = f"{sys.executable} -m apache_beam.runners.worker.sdk_worker_main"  # fn_runner.py's

_lock = threading.Lock()
_installed: dict = {}  # "module": the patched local_job_service; "server": the forkserver's pid if we started it


def wants_forked_workers(beam_args: Iterable[str]) -> bool:
    """Whether these Beam options run FnApiRunner's `multi_processing` mode (where `install` helps);
    False for options the job itself will report as bad."""
    from corpus.errors import CidermillError
    from pipelines.beam_options import option_values

    try:
        opts = option_values(list(beam_args))
    except CidermillError:
        return False
    runner = opts.get("--runner", "").rpartition(".")[2]
    return opts.get("--direct_running_mode") == "multi_processing" and runner in ("", "DirectRunner", "FnApiRunner")


def _worker_main(env: dict) -> None:
    """In the forked worker: Beam's environment for it, then Beam's entry point."""
    os.environ.clear()
    os.environ.update(env)
    from apache_beam.runners.worker import sdk_worker_main

    sdk_worker_main.main([])


class ForkedWorker:
    """What `SubprocessSdkWorker.run` needs of a Popen (wait, poll, kill, returncode), for a worker
    forked from the forkserver."""

    def __init__(self, env: dict):
        self._proc = multiprocessing.get_context("forkserver").Process(
            target=_worker_main, args=(dict(env),), name="beam-sdk-worker")
        self._proc.start()
        self.pid = self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.exitcode

    def poll(self) -> int | None:
        return self._proc.exitcode

    def wait(self, timeout: float | None = None) -> int | None:
        self._proc.join(timeout)
        if self._proc.exitcode is None and timeout is not None:
            raise subprocess.TimeoutExpired(WORKER_COMMAND, timeout)
        return self._proc.exitcode

    def kill(self) -> None:
        if self._proc.exitcode is None:
            self._proc.kill()
            self._proc.join()


def _popen(args, *a, **kw):
    """`subprocess.Popen` as local_job_service calls it: Beam's own worker command is forked,
    anything else runs as asked."""
    if args == WORKER_COMMAND and kw.get("shell") and not a:
        return ForkedWorker(kw.get("env") or os.environ)
    return subprocess.Popen(args, *a, **kw)


def install(modules: Iterable[str] = ()) -> bool:
    """Fork this process's `multi_processing` SDK workers from a forkserver that imports PRELOAD and
    `modules` (the command's WORKER_MODULES); the server starts now and imports while this process
    builds the job. -> False where that cannot be done (no forkserver, Beam moved the hook): the
    workers are then spawned by Beam as before."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    try:
        from apache_beam.runners.portability import local_job_service
    except ImportError:
        return False
    if getattr(local_job_service, "subprocess", None) is not subprocess:
        return False  # not the module layout this hook was written for (or already installed)
    from multiprocessing import forkserver

    from pipelines.runners.dask_fork import server_pid
    with _lock:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(dict.fromkeys([*PRELOAD, *modules])))
        running = server_pid()
        try:
            forkserver.ensure_running()
        except OSError:
            return False  # no server: Beam spawns its workers as before
        shim = types.ModuleType("subprocess")
        shim.__dict__.update(subprocess.__dict__)
        shim.Popen = _popen
        local_job_service.subprocess = shim
        _installed.update(module=local_job_service, server=None if running else server_pid())
    return True


def uninstall() -> None:
    """Put Beam's Popen back and stop the forkserver if `install` started it (its exit reaps the
    workers forked from it, so their CPU counts in this process's children)."""
    from pipelines.runners.dask_fork import stop_server
    with _lock:
        module = _installed.pop("module", None)
        if module is not None:
            module.subprocess = subprocess
        ours = _installed.pop("server", None)
    if ours is not None:
        stop_server({ours})
