"""`cidermill crawl` as Beam: the crawl runs in waves, each wave one Beam pipeline.

A wave reads its frontier, groups URLs by host (one connection per host, hosts in parallel
inside a worker and across workers), fetches/renders/extracts in a DoFn that owns one
WaveCrawler (fetcher, robots cache, browser) from setup() to teardown(), and writes pages, the
crawl log and discovered links as shard datasets. The driver (plain Python, here) then admits
the links into the frontier and writes the next frontier, so a stopped crawl resumes where it
stopped and never fetches a page twice: inside a wave every host's URLs are checkpointed in
chunks (waves/NNNNN/partial), and a wave interrupted midway is redone with the same frontier,
reading its finished chunks back instead of fetching them again.

Output layout (all shard datasets, see corpus/):
    OUT/pages/            PAGES (corpus.schemas): every fetched page, all waves; _report/ inside
    OUT/log/              CRAWL_LOG (crawl.log_schema): one row per URL decision
    OUT/state.json        seeds and config of the crawl (checked on --resume)
    OUT/waves/NNNNN/      frontier, pages, log, links, next, admission datasets; DONE when complete;
                          partial/ chunk checkpoints while the wave runs
    OUT/warc/             wave-NNNNN.warc.gz when --write-warc

OUT may be `s3://bucket/prefix` (pipelines/crawl_publish.py): the driver's state (state.json,
waves/) then lives in a local work directory (`--work-dir`), while a wave's workers write its
pages, log, links and partial/ chunk checkpoints to the store (OUT/_work/waves/NNNNN/), so Dask
workers on other machines share no disk with the driver; the driver copies the three datasets
into the local wave folder when the wave's pipeline ends and drops the store copy once the wave is
DONE. Each run publishes copies of its finished OUT/pages and OUT/log (with their reports),
OUT/warc and OUT/state.json to the store: shards under temporary keys, each manifest last.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from typing import Any, Iterable, Sequence

import apache_beam as beam

from corpus import objectstore
from corpus.buckets import bucket_of
from corpus.errors import CidermillError, ConfigError
from corpus.manifest import manifest_path, read_manifest
from corpus.provenance import make_provenance
from corpus.reader import ShardDataset
from corpus.schemas import PAGES
from corpus.writer import DatasetWriter, finalize_dataset, place_shard_file, prepare_output_dir, write_dataset
from crawl.crawler import CrawlConfig, close_shared, now_iso, shared_crawler
from crawl.frontier import Frontier, FrontierConfig
from crawl.log_schema import CRAWL_LOG, FRONTIER, LINKS
from pipelines.beam_options import beam_job, normalise_args
from pipelines.crawl_publish import (STATE_NAME, check_publish, default_work_dir, drop_store_wave, fetch_wave,
                                     prune_store_work, publish_run, store_wave_dir)
from pipelines.shards_io import WriteShards

log = logging.getLogger("cidermill.crawl")
STATE_FORMAT = "cidermill.crawl/1"
MAX_WAVES = 10_000


# -- Beam pieces ------------------------------------------------------------------------------
class CrawlWaveFn(beam.DoFn):
    """(slot, [frontier entries]) -> pages (main), 'log' and 'links' tagged outputs."""

    def __init__(self, config_json: dict, wave: int, partial_dir: str | None = None):
        self.config_json, self.wave, self.partial_dir = config_json, wave, partial_dir
        self.driver_pid = os.getpid()
        self.crawler = None

    def dataset_paths(self) -> list[str]:  # its chunk checkpoints (the wave's datasets: WriteShards)
        return [self.partial_dir] if self.partial_dir else []

    def setup(self):
        self.crawler = shared_crawler(CrawlConfig.from_json(self.config_json))

    def process(self, element):
        _, entries = element
        out = self.crawler.crawl(list(entries), self.wave, self.partial_dir)
        for p in out.pages:
            yield p
        for r in out.log:
            yield beam.pvalue.TaggedOutput("log", r)
        for ln in out.links:
            yield beam.pvalue.TaggedOutput("links", ln)

    def teardown(self):
        # In the driver's process the crawler (robots cache, browser) is kept for the next wave
        # and closed by the driver; a separate worker process closes its own now.
        if os.getpid() != self.driver_pid:
            close_shared()
        self.crawler = None


class DedupeById(beam.PTransform):
    """Rows with the same id (a link found twice on a page) collapse to one, deterministically."""

    def expand(self, rows):
        return (rows
                | "KeyById" >> beam.Map(lambda r: (r["id"], r))
                | "OnePerId" >> beam.CombinePerKey(lambda rs: min(rs, key=lambda r: json.dumps(r, sort_keys=True,
                                                                                                default=str)))
                | "Values" >> beam.Values())


def _num_slots(beam_args: Sequence[str], n_hosts: int) -> int:
    """Host groups per wave: one per worker the options name (local processes, Dask workers or
    partitions), so hosts crawl in parallel across workers; a host never spans two groups."""
    args = normalise_args(list(beam_args))
    # normalise_args has already turned `--runner dask` into the runner's class path
    workers = 2 if any(a.lower() == "--runner=pipelines.runners.dask_runner.daskrunner"
                       for a in args) else 1  # the local Dask cluster's default size
    for a in args:
        name, _, value = a.partition("=")
        if name in ("--direct_num_workers", "--dask_workers", "--dask_npartitions"):
            try:
                workers = max(workers, int(value))
            except ValueError:
                pass
    return max(1, min(n_hosts, workers))


def run_wave_beam(wave_dir: str, wave: int, entries: list[dict], config: CrawlConfig,
                  beam_args: Sequence[str], provenance: dict, store_dir: str | None = None) -> None:
    """The wave's pages, log and links datasets into `wave_dir`; its workers write them (and the chunk
    checkpoints) in `store_dir` (an s3:// OUT's, pipelines/crawl_publish.py), if given, copied down after."""
    where = store_dir or wave_dir
    hosts = sorted({e["host"] for e in entries})
    n = _num_slots(beam_args, len(hosts))
    slots: dict[int, list[dict]] = {}
    for e in entries:
        slots.setdefault(bucket_of(e["host"], n), []).append(e)
    with beam_job(beam_args) as p:
        outs = (p
                | "Slots" >> beam.Create(sorted(slots.items()))
                | "Crawl" >> beam.ParDo(CrawlWaveFn(config.to_json(), wave, objectstore.join(where, "partial")))
                .with_outputs("log", "links", main="pages"))
        (outs.pages | "WritePages" >> WriteShards(objectstore.join(where, "pages"), "pages", PAGES,
                                                  provenance=provenance, target_bytes=32 << 20))
        (outs.log | "DedupeLog" >> DedupeById()
         | "WriteLog" >> WriteShards(objectstore.join(where, "log"), "crawl_log", CRAWL_LOG, provenance=provenance))
        (outs.links | "DedupeLinks" >> DedupeById()
         | "WriteLinks" >> WriteShards(objectstore.join(where, "links"), "crawl_links", LINKS, provenance=provenance))
    if store_dir:
        fetch_wave(store_dir, wave_dir)


# -- driver -----------------------------------------------------------------------------------
def _wave_dir(out_dir: str, wave: int) -> str:
    return os.path.join(out_dir, "waves", f"{wave:05d}")


def _is_dataset(d: str) -> bool:
    return os.path.exists(manifest_path(d))


def _rows(d: str, columns: list[str] | None = None) -> Iterable[dict]:
    if not _is_dataset(d):
        return []
    return ShardDataset(d).iter_rows(columns)


def _write(d: str, kind: str, schema, rows: list[dict], provenance: dict) -> None:
    import pyarrow as pa
    write_dataset(d, kind, pa.Table.from_pylist(rows, schema=schema), provenance, overwrite=True)


def _state_config(seeds, crawl_cfg: CrawlConfig, frontier_cfg: FrontierConfig) -> dict:
    """What must not change across --resume (budgets may grow; the rest defines the crawl)."""
    c = crawl_cfg.to_json()
    f = {k: v for k, v in frontier_cfg.to_json().items() if k not in ("max_pages", "max_pages_per_host", "wave_size")}
    return {"seeds": list(seeds), "scope": f, "user_agent": c["user_agent"], "optout_token": c["optout_token"]}


class CrawlDriver:
    def __init__(self, seeds: Sequence[str], out_dir: str, crawl_cfg: CrawlConfig, frontier_cfg: FrontierConfig,
                 beam_args: Sequence[str] = (), resume: bool = False, write_warc: bool = False,
                 progress: bool = True, order: str = "learned", target_languages: Sequence[str] = ("en",),
                 work_dir: str | None = None):
        from pipelines.crawl_order import CrawlOrder
        self.seeds = list(seeds)
        # self.out: the local crawl directory; self.publish: the s3:// OUT its datasets go to, if any
        if objectstore.is_remote(out_dir):
            self.publish: str | None = out_dir.rstrip("/")
            self.out = os.path.abspath(work_dir or default_work_dir(self.publish))
        elif work_dir:
            raise ConfigError("--work-dir is for an s3:// --out (a local --out is the crawl's own directory)")
        else:
            self.publish, self.out = None, os.path.abspath(out_dir)
        self.order = CrawlOrder(order, target_languages)
        self.ccfg, self.fcfg = crawl_cfg, frontier_cfg
        self.beam_args = list(beam_args)
        self.resume, self.write_warc, self.progress = resume, write_warc, progress
        self.frontier = Frontier(frontier_cfg)
        crawl_json = {k: v for k, v in crawl_cfg.to_json().items() if k != "extract_workers"}  # where, not what
        self.provenance = make_provenance("pages", {"crawl": crawl_json, "frontier": frontier_cfg.to_json()},
                                          list(self.seeds))
        self.seed_log: list[dict] = []
        self.wave = 0
        self.redo: tuple[int, list[dict]] | None = None  # (wave, frontier) of an interrupted wave

    def say(self, msg: str) -> None:
        if self.progress:
            print(f"[crawl] {msg}", flush=True)

    # -- state ----------------------------------------------------------------------------------
    def _init_state(self) -> None:
        state_path = os.path.join(self.out, STATE_NAME)
        cfg = _state_config(self.seeds, self.ccfg, self.fcfg)
        if os.path.exists(state_path):
            with open(state_path, encoding="utf-8") as f:
                old = json.load(f)
            if not self.resume:
                if old.get("config") != cfg:
                    raise CidermillError(f"{self.out}: holds a different crawl; pass --resume to continue it "
                                         "or choose another --out")
                # the same crawl again (same seeds, scope, tokens): a rerun replaces it, like any dataset
                self.say("same crawl already in --out: starting over (use --resume to continue it instead)")
                for name in ("waves", "pages", "log", "warc"):
                    shutil.rmtree(os.path.join(self.out, name), ignore_errors=True)
                os.remove(state_path)
                return self._init_state()
            if not self.seeds:
                self.seeds = old["config"]["seeds"]
                cfg = _state_config(self.seeds, self.ccfg, self.fcfg)
            if old.get("config") != cfg:
                raise ConfigError(f"{self.out}: --resume with different seeds/scope/tokens than the stored crawl "
                                  f"(stored: {json.dumps(old.get('config'))[:300]})")
        else:
            if os.path.isdir(self.out) and os.listdir(self.out):
                raise CidermillError(f"{self.out}: output directory is not empty and holds no crawl")
            if self.resume:
                self.say("nothing to resume: starting a new crawl")
            if not self.seeds:
                raise ConfigError("no seeds: pass --seeds URL [URL ...]")
            os.makedirs(self.out, exist_ok=True)
            tmp = state_path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"format": STATE_FORMAT, "config": cfg, "created": now_iso()}, f, indent=1)
            os.replace(tmp, state_path)
        for s in self.seeds:
            url, why = self.frontier.add_seed(s)
            if url is None:
                self.seed_log.append(_decision_row(s, "skipped", why or "invalid_url", "bad seed", -1))
        self.order.rescore(self.frontier.pending)
        if self.publish:
            check_publish(self.publish, os.path.join(self.out, STATE_NAME), cfg)

    def _replay(self) -> None:
        """Rebuild seen set, budgets and pending frontier from completed waves."""
        waves_root = os.path.join(self.out, "waves")
        done = []
        for name in sorted(os.listdir(waves_root)) if os.path.isdir(waves_root) else []:
            d = os.path.join(waves_root, name)
            if not name.isdigit():
                continue
            if os.path.exists(os.path.join(d, "DONE")):
                done.append(int(name))
            elif _is_dataset(os.path.join(d, "frontier")):
                # an interrupted wave: redo it with the same frontier; its finished chunks are reused
                for part in os.listdir(d):
                    if part not in ("frontier", "partial"):
                        p = os.path.join(d, part)
                        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                self.redo = (int(name), list(_rows(os.path.join(d, "frontier"))))
            else:
                shutil.rmtree(d)
        f = self.frontier
        for w in done:
            d = _wave_dir(self.out, w)
            for r in _rows(os.path.join(d, "frontier"), ["url"]):
                f.seen.add(r["url"])
            for r in _rows(os.path.join(d, "links"), ["url"]):
                f.seen.add(r["url"])
            for r in _rows(os.path.join(d, "log"), ["url", "host", "decision", "fetch_ms"]):
                if r["decision"] != "deferred" and r["fetch_ms"] is not None:
                    f.fetched += 1
                    f.fetched_per_host[r["host"]] += 1
        for w in done:  # what the order learned is rebuilt from the fetched pages, wave by wave
            self.order.learn(_rows(os.path.join(_wave_dir(self.out, w), "pages"), ORDER_COLUMNS))
        if done:
            last = _wave_dir(self.out, done[-1])
            f.pending = {r["url"]: r for r in _rows(os.path.join(last, "next"))}
            self.order.rescore(f.pending)
            self.wave = done[-1] + 1
        if self.redo is not None and self.redo[0] != self.wave:
            shutil.rmtree(_wave_dir(self.out, self.redo[0]), ignore_errors=True)  # not the next wave: stale
            self.redo = None
        if self.publish:  # the store's wave data this run does not redo is stale (or a previous run's)
            prune_store_work(self.publish, self.redo[0] if self.redo else None)
        if done:
            self.say(f"resuming after wave {done[-1]}: {f.fetched} pages fetched, {len(f.pending)} URLs pending")

    # -- one wave -------------------------------------------------------------------------------
    def _run_wave(self) -> bool:
        f = self.frontier
        d = _wave_dir(self.out, self.wave)
        if self.redo is not None:
            entries = self.redo[1]
            self.redo = None
            for e in entries:
                f.pending.pop(e["url"], None)
            self.say(f"wave {self.wave}: redoing an interrupted wave (finished chunks are not fetched again)")
        else:
            entries = f.select()
            if not entries:
                return False
            os.makedirs(d, exist_ok=True)
            _write(os.path.join(d, "frontier"), "crawl_frontier", FRONTIER, entries, self.provenance)
        t0 = time.time()
        self.say(f"wave {self.wave}: {len(entries)} URLs on {len({e['host'] for e in entries})} hosts "
                 f"({f.fetched} fetched so far, {len(f.pending)} more pending)")
        run_wave_beam(d, self.wave, entries, self.ccfg, self.beam_args, self.provenance,
                      store_wave_dir(self.publish, self.wave) if self.publish else None)
        self._finish_wave(d, entries, t0)
        return True

    def _finish_wave(self, d: str, entries: list[dict], t0: float) -> None:
        """Admit the wave's links, write the next frontier, mark the wave DONE."""
        f = self.frontier
        decisions, consumed = {}, []
        for r in _rows(os.path.join(d, "log"), ["url", "decision", "fetch_ms"]):
            decisions[r["url"]] = r["decision"]
            if r["decision"] != "deferred" and r["fetch_ms"] is not None:
                consumed.append(r["url"])
        by_url = {e["url"]: e for e in entries}
        f.record_attempts([by_url[u] for u in consumed if u in by_url], decisions)
        admission = []
        links = sorted(_rows(os.path.join(d, "links")), key=lambda r: (r["depth"], r["url"], r["parent"] or ""))
        for ln in links:
            reason = f.add(ln["url"], ln["depth"], ln["parent"], ln["source"], ln["retries"])
            if reason:
                admission.append(_decision_row(ln["url"], "skipped", reason, f"found on {ln['parent']}", self.wave,
                                               ln["depth"], ln["parent"]))
        _write(os.path.join(d, "admission"), "crawl_log", CRAWL_LOG, admission, self.provenance)
        self.order.learn(_rows(os.path.join(d, "pages"), ORDER_COLUMNS))
        self.order.rescore(f.pending)
        _write(os.path.join(d, "next"), "crawl_frontier", FRONTIER, f.leftovers(), self.provenance)
        if self.write_warc:
            from crawl.warc import write_warc
            os.makedirs(os.path.join(self.out, "warc"), exist_ok=True)
            write_warc(os.path.join(self.out, "warc", f"wave-{self.wave:05d}.warc.gz"),
                       _rows(os.path.join(d, "pages")))
        n_pages = read_manifest(os.path.join(d, "pages")).rows
        with open(os.path.join(d, "DONE.tmp"), "w", encoding="utf-8") as fh:
            json.dump({"wave": self.wave, "urls": len(entries), "pages": n_pages, "seconds": round(time.time() - t0, 2),
                       "finished": now_iso()}, fh)
        os.replace(os.path.join(d, "DONE.tmp"), os.path.join(d, "DONE"))
        shutil.rmtree(os.path.join(d, "partial"), ignore_errors=True)  # the wave's datasets hold it all now
        if self.publish:
            drop_store_wave(self.publish, self.wave)
        self.say(f"wave {self.wave}: {n_pages} pages in {time.time() - t0:.1f}s")
        self.wave += 1

    # -- merge ----------------------------------------------------------------------------------
    def _merge(self) -> tuple[str, dict]:
        waves_root = os.path.join(self.out, "waves")
        waves = sorted(int(n) for n in os.listdir(waves_root) if n.isdigit()) if os.path.isdir(waves_root) else []
        pages_dir = os.path.join(self.out, "pages")
        prepare_output_dir(pages_dir, "pages", overwrite=True)
        infos = []
        for w in waves:
            src = os.path.join(_wave_dir(self.out, w), "pages")
            if not _is_dataset(src):
                continue
            for s in read_manifest(src).shards:
                if s.rows:
                    infos.append(place_shard_file(os.path.join(src, s.path), pages_dir, len(infos), s))
        finalize_dataset(pages_dir, "pages", PAGES, infos, self.provenance)
        leftovers = self.frontier.leftovers()
        limit_rows = [_decision_row(e["url"], "skipped", "limit", "page budget exhausted", self.wave, e["depth"],
                                    e["parent"]) for e in leftovers] if self.frontier.budget_left() == 0 else []
        log_dir = os.path.join(self.out, "log")
        with DatasetWriter(log_dir, "crawl_log", CRAWL_LOG, self.provenance, overwrite=True) as w:
            w.write_rows(self.seed_log)
            for wv in waves:
                why = {r["url"]: r for r in _rows(os.path.join(_wave_dir(self.out, wv), "frontier"),
                                                  ["url", "priority", "priority_parts"])}
                for part in ("log", "admission"):
                    dd = os.path.join(_wave_dir(self.out, wv), part)
                    if _is_dataset(dd):
                        w.write_table(_with_priority(ShardDataset(dd).to_table(), why if part == "log" else {}))
            w.write_rows(limit_rows)
        from pipelines.crawl_report import write_crawl_report
        summary = write_crawl_report(pages_dir, log_dir, pending=len(leftovers))
        if self.publish:  # the finished local datasets, report included, go to the store as they are
            pages_dir = publish_run(self.publish, self.out, self.write_warc)
        return pages_dir, summary

    def run(self) -> tuple[str, dict]:
        self._init_state()
        self._replay()
        if self.wave == 0 and not self.frontier.pending:
            bad = "; ".join(f"{r['url'][:100]} ({r['reason']})" for r in self.seed_log)
            raise ConfigError(f"no valid seed URL: {bad}")
        t0 = time.time()
        try:
            for _ in range(MAX_WAVES):
                if self.frontier.budget_left() <= 0 or not self._run_wave():
                    break
        finally:
            close_shared()
        pages_dir, summary = self._merge()
        summary["seconds"] = round(time.time() - t0, 2)
        self.say(f"done: {summary['fetched']} pages fetched, {summary['skipped']} URLs skipped; pages at {pages_dir}")
        return pages_dir, summary


ORDER_COLUMNS = ["url", "status", "text", "outlinks"]


def _with_priority(table, why: dict[str, dict]):
    """The wave's log with each fetched URL's priority and its parts (from the wave's frontier)."""
    import pyarrow as pa
    urls = table.column("url").to_pylist()
    pri = pa.array([(why.get(u) or {}).get("priority") for u in urls], pa.float64())
    parts = pa.array([(why.get(u) or {}).get("priority_parts") for u in urls], pa.string())
    table = table.set_column(table.schema.get_field_index("priority"), "priority", pri)
    return table.set_column(table.schema.get_field_index("priority_parts"), "priority_parts", parts)


def _decision_row(url: str, decision: str, reason: str | None, detail: str, wave: int, depth: int = 0,
                  parent: str | None = None) -> dict[str, Any]:
    from crawl.crawler import log_id
    from crawl.urls import authority_of
    try:
        host = authority_of(url)
    except ValueError:
        host = ""
    return {"id": log_id(url, parent, f"admission:{reason}"), "url": url, "host": host, "depth": depth,
            "parent": parent, "wave": wave, "decision": decision, "reason": reason, "detail": detail[:500],
            "status": None, "fetch_ms": None, "bytes": None, "rendered": False, "render_reason": None,
            "training_allowed": None, "robots_noindex": None, "robots_nofollow": None, "at": now_iso()}


def run_crawl(seeds: Sequence[str], out_dir: str, *, allow_private: bool = False, render: str = "auto",
              max_pages: int = 1000, max_depth: int = 3, delay: float = 1.0, resume: bool = False,
              beam_args: Sequence[str] = (), write_warc: bool = False, progress: bool = True,
              crawl_config: CrawlConfig | None = None, frontier_config: FrontierConfig | None = None,
              order: str = "learned", target_languages: Sequence[str] = ("en",), work_dir: str | None = None,
              **overrides) -> tuple[str, dict]:
    """Crawl `seeds` into `out_dir`; returns (pages dataset path, summary dict). For the demo and tests.

    Extra keyword arguments set CrawlConfig / FrontierConfig fields by name (e.g. read_timeout=2)."""
    cc = crawl_config or CrawlConfig()
    fc = frontier_config or FrontierConfig()
    cc.allow_private, cc.render, cc.delay = allow_private, render, delay
    fc.max_pages, fc.max_depth = max_pages, max_depth
    for k, v in overrides.items():
        if k in CrawlConfig.__dataclass_fields__:
            setattr(cc, k, v)
        elif k in FrontierConfig.__dataclass_fields__:
            setattr(fc, k, v)
        else:
            raise ConfigError(f"unknown crawl option {k!r}")
    if cc.render not in ("auto", "always", "never"):
        raise ConfigError(f"--render must be auto, always or never (got {cc.render!r})")
    return CrawlDriver(seeds, out_dir, cc, fc, beam_args, resume=resume, write_warc=write_warc,
                       progress=progress, order=order, target_languages=target_languages, work_dir=work_dir).run()
