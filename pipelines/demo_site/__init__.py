"""The embedded demo site: a small multilingual website with every case the crawler, text,
image and synthetic pipelines must handle, served on 127.0.0.1, plus its ground truth.

    from pipelines.demo_site import DemoSite, load_ground_truth
    gt = load_ground_truth()
    with DemoSite(log_path=tmp_path / "access.jsonl") as site:
        ...  # site.url, gt["paths"][...]

See README.md beside this file for the ground-truth fields.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pipelines.demo_site.server import SITE_DIR, DemoSite

GROUND_TRUTH_PATH = Path(__file__).resolve().parent / "ground_truth.json"


@lru_cache(maxsize=1)
def _load() -> str:
    return GROUND_TRUTH_PATH.read_text(encoding="utf-8")


def load_ground_truth() -> dict:
    """The ground truth as a fresh dict (safe to mutate)."""
    return json.loads(_load())


def html_pages(gt: dict | None = None, **where) -> dict[str, dict]:
    """HTML paths of the ground truth whose entries match every `field=value` in `where`;
    a list-valued field (e.g. categories="js_rendered") matches when it contains the value."""
    gt = gt or load_ground_truth()
    out = {}
    for path, e in gt["paths"].items():
        if e["kind"] != "html":
            continue
        ok = True
        for k, v in where.items():
            have = e.get(k)
            ok = ok and (v in have if isinstance(have, list) else have == v)
        if ok:
            out[path] = e
    return out


__all__ = ["DemoSite", "SITE_DIR", "GROUND_TRUTH_PATH", "load_ground_truth", "html_pages"]
