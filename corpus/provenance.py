"""Provenance recorded in every manifest: command, config, version, git commit, time, inputs."""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import subprocess
import sys
from typing import Any

VERSION = "0.1.0"


def git_commit() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def job_key(kind: str, config: Any, inputs: list[str]) -> str:
    """Identity of a job: the same kind, config and inputs is the same job (a rerun, not a clash)."""
    blob = json.dumps({"kind": kind, "config": config, "inputs": sorted(inputs)}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def make_provenance(kind: str, config: Any = None, inputs: list[str] | None = None,
                    command: list[str] | None = None) -> dict[str, Any]:
    inputs = [os.path.abspath(p) if os.path.exists(p) else p for p in (inputs or [])]
    config = config if config is not None else {}
    return {
        "command": list(command if command is not None else sys.argv),
        "config": config,
        "version": VERSION,
        "git": git_commit(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "inputs": inputs,
        "job": job_key(kind, config, inputs),
    }
