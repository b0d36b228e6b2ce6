"""`cidermill demo --fresh` deletes only a folder a demo run created (it holds the demo's marker);
any other --out is refused with one line and left untouched."""
import os
import subprocess
import sys

import pytest

from pipelines.commands.demo import MARKER
from pipelines.demo_stages import STAGES


def _demo(out, *extra):
    # --skip every stage: the run only prepares --out, starts the site and prints the summary
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--out", str(out), "--port", "0",
                           "--skip", ",".join(name for name, _, _ in STAGES), *extra],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("make", ["folder", "file", "link"])
def test_fresh_refuses_what_no_demo_created(tmp_path, make):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    out = tmp_path / "out"
    if make == "folder":
        out = precious
    elif make == "file":
        out.write_text("not a folder")
    else:
        out.symlink_to(precious)
    r = _demo(out, "--fresh")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--fresh" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (precious / "thesis.tex").read_text() == "years of work"
    assert os.path.lexists(out)


def test_fresh_deletes_a_previous_demo_output(tmp_path):
    out = tmp_path / "demo"
    r = _demo(out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (out / MARKER).is_file()
    (out / "old-stage-output.txt").write_text("stale")
    r = _demo(out, "--fresh")
    assert r.returncode == 0, r.stderr[-2000:]
    assert not (out / "old-stage-output.txt").exists() and (out / MARKER).is_file()
