"""The README's benchmark table is generated from bench/results/*.json: the committed README must
match the committed results (`bench/readme_table.py --check`), and the check must notice a change."""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "readme_table.py")


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


def test_committed_readme_table_is_current():
    r = _run("--check")
    assert r.returncode == 0, r.stderr


def test_check_fails_when_results_change_and_regeneration_fixes_it(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(os.path.join(ROOT, "README.md"), readme)
    results = tmp_path / "results"
    shutil.copytree(os.path.join(ROOT, "bench", "results"), results)
    rec = {"bench": "zz_probe", "date": "2026-12-02T01:00:00+00:00", "machine": {"cores": 2, "loadavg": [1, 1, 1]},
           "start": {"loadavg": [3.25, 2, 2]}, "not_covered": "cold caches",
           "headline": [{"what": "probe a|b", "figure": "12.5 things/s", "target": ">= 10"},
                        {"what": "second row", "figure": "0.99", "target": ""}]}
    (results / "zz_probe.json").write_text(json.dumps(rec))
    args = ("--readme", str(readme), "--results", str(results))
    r = _run("--check", *args)
    assert r.returncode == 1 and "stale" in r.stderr
    assert _run(*args).returncode == 0
    text = readme.read_text()
    assert "| `bench/zz_probe.py` | probe a\\|b | 12.5 things/s | >= 10 | 2026-12-02, load 3.2 on 2 cores |" in text
    assert "|  | second row | 0.99 |  |  |" in text and "`bench/zz_probe.py` does not cover: cold caches" in text
    assert _run("--check", *args).returncode == 0
    # a hand edit inside the table is caught too; a missing results file only removes its rows
    readme.write_text(text.replace("12.5 things/s", "13 things/s"))
    assert _run("--check", *args).returncode == 1
    (results / "zz_probe.json").unlink()
    assert _run(*args).returncode == 0 and "zz_probe" not in readme.read_text()
    (results / "bad.json").write_text("{not json")
    r = _run("--check", *args)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
