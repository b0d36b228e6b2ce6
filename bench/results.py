"""One place where every bench writes what it measured: `bench/results/<name>.json`.

A figure quoted in the README comes from one of these files (see `bench/readme_table.py`), never
from a hand-typed number. Each file records the conditions of the run beside the figures: the
machine (CPU model, cores, memory), the load average before and after, package versions and the
date, so that a reader can tell a quiet run from a loaded one.

    from bench.results import save_result
    save_result("extract_f1", {"rows": [...], "headline": {...}}, packages=["trafilatura"])

The payload is free-form JSON, but a bench that feeds the README table puts the figures it wants
quoted under `"headline"`: a list of rows `{"what": str, "figure": str, "target": str}`.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from importlib import metadata

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _git_head() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(RESULTS_DIR), timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions(packages) -> dict[str, str | None]:
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict:
    """What a reader needs to judge a figure: hardware, load now, Python, commit."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "mem_gib": _mem_gib(),
        "loadavg": list(os.getloadavg()),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "git": _git_head(),
    }


def start_conditions() -> dict:
    """Call before measuring; pass the result to save_result(start=...) to record the load at start."""
    return {"loadavg": list(os.getloadavg()),
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


def save_result(name: str, payload: dict, *, packages=(), start: dict | None = None,
                argv=None, results_dir: str | None = None) -> str:
    """Write bench/results/<name>.json (atomically) and return its path."""
    record = {
        "bench": name,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": list(sys.argv if argv is None else argv),
        "machine": machine(),
        "start": start,
        "versions": _versions(["cidermill", *packages]),
        **payload,
    }
    out_dir = results_dir or RESULTS_DIR
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=False, default=str)
        f.write("\n")
    os.replace(tmp, path)
    return path
