"""A crawl into an object store (`cidermill crawl --out s3://bucket/prefix`): where its working
state lives, and what each run checks and publishes there.

The crawl's state (state.json, waves/) is read back by every rerun and --resume, so it stays in a
local work directory; at the end of each run the crawl driver (pipelines/crawl_pipeline.py)
uploads the finished pages and log datasets and the WARC files, and the state file is put here.
"""
from __future__ import annotations

import hashlib
import json
import os

from corpus import objectstore
from corpus.errors import CidermillError

STATE_NAME = "state.json"


def default_work_dir(out_uri: str) -> str:
    """Where the working state of a crawl into `out_uri` lives on this machine."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256(out_uri.rstrip("/").encode()).hexdigest()[:16]
    return os.path.join(cache, "cidermill", "crawl", key)


def check_publish(out_uri: str, local_state: str, config: dict) -> None:
    """An s3:// OUT may be empty or hold this crawl (the same `config`: seeds, scope, tokens);
    anything else is refused before a page is fetched. Then the crawl's state file is put there."""
    uri = objectstore.join(out_uri, STATE_NAME)
    objectstore.check_bucket(out_uri)
    if objectstore.exists(uri):
        if json.loads(objectstore.read_bytes(uri)).get("config") != config:
            raise CidermillError(f"{out_uri}: holds a different crawl; choose another --out")
    elif objectstore.listdir(out_uri):
        raise CidermillError(f"{out_uri}: is not empty and holds no crawl; choose another --out")
    else:
        with open(local_state, "rb") as f:
            objectstore.write_bytes(uri, f.read())
