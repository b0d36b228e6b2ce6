"""Beam's `multi_processing` SDK workers fork from one server that imported the job's modules
(pipelines/runners/forked_sdk.py); a worker that fails still fails the job's way; other worker
command lines and the hook itself are left as Beam has them."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import apache_beam as beam
import psutil
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability import local_job_service

from pipelines.runners import dask_fork, forked_sdk

pytestmark = pytest.mark.slow


def test_multi_processing_workers_fork_from_one_preloaded_server(tmp_path):
    def note_worker(x: int, out_dir: str) -> int:
        """In a worker: its pid, its parent and whether the job's module was there before any task.
        (Nested, so that it travels by value: a worker Beam spawns could not import this file.)"""
        with open(os.path.join(out_dir, f"{os.getpid()}.json"), "w") as f:
            json.dump({"parent": os.getppid(), "preloaded": "pipelines.text_pipeline" in sys.modules}, f)
        return x

    dask_fork.stop_server()  # another test's forkserver would hold no preload
    assert forked_sdk.install(["pipelines.text_pipeline"])
    try:
        server = dask_fork.server_pid()
        assert server is not None and local_job_service.subprocess is not subprocess
        opts = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=multi_processing",
                                "--direct_num_workers=2"])
        with beam.Pipeline(options=opts) as p:
            _ = (p | beam.Create(list(range(40)), reshuffle=False)
                 | beam.Map(note_worker, out_dir=str(tmp_path)))
    finally:
        forked_sdk.uninstall()
    views = [json.load(open(f)) for f in glob.glob(str(tmp_path / "*.json"))]
    assert views, "no worker ran a task"
    assert {v["parent"] for v in views} == {server}  # forked by the server, not spawned by Beam's shell
    assert server != os.getpid() and all(v["preloaded"] for v in views)
    assert local_job_service.subprocess is subprocess  # Beam's Popen is back
    assert not psutil.pid_exists(server)  # stopped and reaped with the job


def test_a_worker_that_fails_reports_its_exit_status():
    """Without Beam's control address the worker's entry point raises: a non-zero status, which
    SubprocessSdkWorker turns into the job's error as it does for a spawned worker."""
    try:
        worker = forked_sdk.ForkedWorker({"PATH": os.environ.get("PATH", "")})
        assert worker.wait(120) not in (None, 0)
        assert worker.poll() == worker.returncode != 0
    finally:
        dask_fork.stop_server()


def test_other_worker_command_lines_run_as_asked():
    proc = forked_sdk._popen("echo cidermill", shell=True, stdout=subprocess.PIPE)
    assert isinstance(proc, subprocess.Popen) and proc.communicate()[0].strip() == b"cidermill"


def test_only_the_direct_runners_multi_processing_mode_is_forked():
    wants = forked_sdk.wants_forked_workers
    assert wants(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert wants(["--runner", "FnApiRunner", "--direct_running_mode", "multi_processing"])
    assert not wants(["--direct_running_mode=in_memory"])
    assert not wants(["--runner=dask", "--direct_running_mode=multi_processing"])
    assert not wants([])
