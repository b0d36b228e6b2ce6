"""`cidermill demo` end to end: every stage runs on the embedded site and every output verifies."""
import os
import subprocess
import sys

import pytest

from corpus.verify import verify_dataset

pytestmark = pytest.mark.slow


def test_demo_runs_every_stage(tmp_path):
    out = tmp_path / "demo"
    r = subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--out", str(out)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    summary = r.stdout[r.stdout.index("cidermill demo finished"):]
    for stage in ("crawl", "text", "synth", "clip", "images", "train"):
        line = next(l for l in summary.splitlines() if l.strip().startswith(stage))
        assert "done in" in line, line
    for d in ("crawl/pages", "crawl/log", "text", "synth/charts", "synth/captions", "synth/tables",
              "images/pairs", "images/interleaved", "tokens"):
        assert verify_dataset(str(out / d)) == [], d
    assert os.path.exists(out / "text" / "_report" / "index.html")
    assert os.path.exists(out / "train" / "_report" / "plots" / "loss.png")
    assert "resumed at 100" in summary
