"""The arena limit reaches child processes, and a value the user set wins."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = "import os; print(os.environ.get('MALLOC_ARENA_MAX'))"
PROBE = (
    "import subprocess, sys\n"
    "from pipelines.malloc_arenas import limit_malloc_arenas\n"
    "print(limit_malloc_arenas())\n"
    f"print(subprocess.run([sys.executable, '-c', {CHILD!r}], capture_output=True, text=True).stdout.strip())\n"
)


def _probe(**env_extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env.update(env_extra, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt")
def test_default_limit_applies_here_and_in_children():
    assert _probe() == ["2", "2"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt")
def test_user_value_wins_and_bad_value_is_ignored():
    assert _probe(MALLOC_ARENA_MAX="4") == ["4", "4"]
    assert _probe(MALLOC_ARENA_MAX="lots") == ["None", "lots"]
