"""A local Dask cluster's workers fork from one server process that imported the job's modules
(pipelines/runners/dask_fork.py): they share one hash seed, the one a restarted (spawned) worker
gets; a server started elsewhere with another seed is not used; no server outlives the clusters."""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest

from pipelines.runners import dask_client, dask_fork

pytestmark = pytest.mark.slow


def _worker_view() -> tuple:
    """What a worker reports: its parent, whether the text job's module was there before any task
    imported it, its hash seed and a string's hash under it."""
    return os.getppid(), "pipelines.text_pipeline" in sys.modules, os.environ.get("PYTHONHASHSEED"), hash("cidermill")


def _spawned_hash(seed: str) -> int:
    """The hash a fresh interpreter (a spawned, or restarted, worker) gives under `seed`."""
    out = subprocess.run([sys.executable, "-c", "print(hash('cidermill'))"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
    return int(out.stdout)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_local_workers_fork_from_one_server_with_the_nannys_hash_seed():
    dask_fork.stop_server()  # one another test's forkserver pool left running would hold no preload
    try:
        client, _ = dask_client._local_cluster(2, ["pipelines.text_pipeline"])
        views = list(client.run(_worker_view).values())
    finally:
        dask_client.close_local_clusters()
    assert len(views) == 2
    (parent, preloaded, seed, h), other = views[0], views[1]
    assert parent != os.getpid() and other[0] == parent  # both forked by the same server process
    assert preloaded and other[1]  # imported by the server, not by a task
    assert seed == os.environ["PYTHONHASHSEED"] and other[2] == seed
    assert h == other[3] == _spawned_hash(seed)  # as a worker the nanny spawns after a kill
    assert not _alive(parent)  # the server is stopped and reaped with the clusters


def test_a_server_started_elsewhere_with_another_seed_is_not_used():
    """Another part of the process started the forkserver under a different seed: the cluster
    is started again with spawn, so every worker hashes alike."""
    from multiprocessing import forkserver

    dask_fork.stop_server()
    saved = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "123"
    try:
        multiprocessing.get_context("forkserver").set_forkserver_preload([])
        forkserver.ensure_running()  # as another forkserver pool in this process would have
    finally:
        if saved is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = saved
    foreign = dask_fork.server_pid()
    try:
        client, _ = dask_client._local_cluster(1)
        (parent, _, seed, h), = client.run(_worker_view).values()
        dask_client.close_local_clusters()
        assert foreign is not None and _alive(foreign)  # not ours to stop: its owner may still use it
    finally:
        dask_client.close_local_clusters()
        dask_fork.stop_server()
    assert parent == os.getpid()  # spawned by this process's nanny, not forked by the server
    assert seed == os.environ["PYTHONHASHSEED"] != "123"
    assert h == _spawned_hash(seed)


def _profiles(dask_worker) -> bool:
    return "profile" in dask_worker.periodic_callbacks


def test_local_workers_sample_no_profile_also_after_a_restart():
    """The local cluster has no dashboard to show a profile; its workers, and one the nanny
    restarts after a SIGKILL, do not sample one (runners/dask_client.py LOCAL_WORKER_CONFIG)."""
    import signal

    from tests_dask import wait_until

    try:
        client, _ = dask_client._local_cluster(1)
        assert list(client.run(_profiles).values()) == [False]
        (pid,) = client.run(os.getpid).values()
        os.kill(pid, signal.SIGKILL)

        def restarted() -> bool:
            try:
                return bool(set(client.run(os.getpid).values()) - {pid})
            except Exception:  # noqa: BLE001  (the dead worker is still listed for a moment)
                return False

        assert wait_until(restarted, timeout=60)
        assert list(client.run(_profiles).values()) == [False]
    finally:
        dask_client.close_local_clusters()
