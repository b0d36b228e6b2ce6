"""A Python snippet run in a child process with a time cap, from the repository root: a test of
work that used to blow up (backtracking, quadratic scans) fails at the cap instead of stalling
the suite."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_capped(script: str, timeout: float) -> str:
    """The snippet's stdout; it must exit 0 within `timeout` seconds."""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    return run.stdout
