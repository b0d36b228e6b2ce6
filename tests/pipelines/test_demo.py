"""`cidermill demo` end to end: every stage runs on the embedded site and every output verifies."""
import os
import socket
import subprocess
import sys

import pytest

from corpus.manifest import read_manifest
from corpus.verify import verify_dataset

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_demo_runs_every_stage(tmp_path):
    out = tmp_path / "demo"
    r = subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--out", str(out), "--port", str(_free_port())],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=2400)
    # the error line of a failing stage is the last thing printed: show the end of the merged output
    assert r.returncode == 0, r.stdout[-6000:]
    summary = r.stdout[r.stdout.index("cidermill demo finished"):]
    for stage in ("crawl", "text", "synth", "clip", "images", "train", "posttrain", "vision"):
        line = next(l for l in summary.splitlines() if l.strip().startswith(stage))
        assert "done in" in line, line
    assert "held-out QA accuracy" in next(l for l in summary.splitlines() if l.strip().startswith("vision"))
    assert "base" in next(l for l in summary.splitlines() if l.strip().startswith("posttrain"))
    for d in ("crawl/pages", "crawl/log", "text", "synth/charts", "synth/captions", "synth/tables",
              "images/pairs", "images/interleaved", "tokens"):
        assert verify_dataset(str(out / d)) == [], d
        assert read_manifest(str(out / d)).rows > 0, d
    assert os.path.exists(out / "text" / "_report" / "index.html")
    assert os.path.exists(out / "train" / "_report" / "plots" / "loss.png")
    assert "resumed at 100" in summary
    assert "typed answer: PageNote(topic=<Topic." in r.stdout  # guided generation printed a typed object


def test_demo_port_in_use_is_one_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--out", str(tmp_path / "d"),
                            "--port", str(port)], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert f"127.0.0.1:{port}" in r.stderr and "--port" in r.stderr
