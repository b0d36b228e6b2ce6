"""A crawl into an object store (`cidermill crawl --out s3://bucket/prefix`): where its working
state lives, and what each run checks and publishes there.

The driver's state (state.json, waves/: frontiers, admissions, DONE markers and a copy of every
wave's datasets) is read back by every rerun and --resume, so it stays in a local work directory
(`--work-dir`). What the WORKERS write during a wave goes to the store instead, under
OUT/_work/waves/NNNNN/ (its pages, log and links datasets and the partial/ chunk checkpoints,
crawl/checkpoint.py), so Dask workers on other machines need no filesystem shared with the driver.
When the wave's pipeline ends, the driver copies the three datasets down into the local wave
folder (everything after that reads them there, as for a local --out); when the wave is DONE its
store copy is removed. A wave interrupted midway keeps its store chunk checkpoints for the redo
(--resume); anything else left under OUT/_work (a rerun that starts over, waves already DONE) is
removed before the first wave. At the end of each run the crawl driver
(pipelines/crawl_pipeline.py) uploads the finished pages and log datasets and the WARC files;
the state file is put here before any page is fetched.
"""
from __future__ import annotations

import hashlib
import json
import os

from corpus import objectstore
from corpus.errors import CidermillError
from corpus.manifest import manifest_path
from corpus.writer import download_dataset, upload_dataset

STATE_NAME = "state.json"
WORK_NAME = "_work"  # OUT/_work/waves/NNNNN/: a wave's worker output until the driver has it
WAVE_DATASETS = ("pages", "log", "links")


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


def store_wave_dir(out_uri: str, wave: int) -> str:
    """Where the workers of wave `wave` of a crawl into `out_uri` write its datasets and chunks."""
    return objectstore.join(out_uri, f"{WORK_NAME}/waves/{wave:05d}")


def fetch_wave(store_dir: str, wave_dir: str) -> None:
    """The wave's pages, log and links datasets from the store into the local wave folder."""
    for name in WAVE_DATASETS:
        if objectstore.exists(manifest_path(objectstore.join(store_dir, name))):
            download_dataset(objectstore.join(store_dir, name), os.path.join(wave_dir, name))


def drop_store_wave(out_uri: str, wave: int) -> None:
    """A DONE wave's store copy: the local wave folder holds it all now."""
    objectstore.remove(store_wave_dir(out_uri, wave), recursive=True)


def prune_store_work(out_uri: str, redo: int | None) -> None:
    """Remove what the store holds under OUT/_work that this run will not use: everything, or, when
    wave `redo` is an interrupted wave about to be redone, everything but its chunk checkpoints."""
    work = objectstore.join(out_uri, WORK_NAME)
    if redo is None:
        objectstore.remove(work, recursive=True)
        return
    waves, keep = objectstore.join(work, "waves"), f"{redo:05d}"
    for name in objectstore.listdir(waves):
        d = objectstore.join(waves, name)
        if name != keep:
            objectstore.remove(d, recursive=True)
            continue
        for part in objectstore.listdir(d):
            if part != "partial":
                objectstore.remove(objectstore.join(d, part), recursive=True)


def publish_run(out_uri: str, work_dir: str, write_warc: bool) -> str:
    """The run's finished local pages and log datasets (reports included) and WARC files to the
    store, as they are; then OUT/_work goes (every wave is DONE). -> the published pages URI."""
    if write_warc:
        objectstore.upload_dir(os.path.join(work_dir, "warc"), objectstore.join(out_uri, "warc"))
    upload_dataset(os.path.join(work_dir, "log"), objectstore.join(out_uri, "log"))
    upload_dataset(os.path.join(work_dir, "pages"), objectstore.join(out_uri, "pages"))
    prune_store_work(out_uri, None)
    return objectstore.join(out_uri, "pages")
