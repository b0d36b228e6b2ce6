"""The crawl's audit report (the pages dataset's report dir, corpus.report), computed from the crawl log.

Stage `crawl`: one row per URL decision, kept = fetched, dropped by skip reason; stages
`host <name>` for the busiest hosts; counters for status codes; info for render share, bytes
and latency percentiles. Drop samples are the log rows themselves (URL, reason, detail).
"""
from __future__ import annotations

from collections import Counter

from corpus.reader import ShardDataset
from corpus.report import ReportStats, Samples, write_report

MAX_HOST_STAGES = 30
LOG_COLUMNS = ["url", "host", "decision", "reason", "detail", "status", "fetch_ms", "bytes", "rendered",
               "render_reason", "training_allowed", "depth", "parent"]


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


def write_crawl_report(pages_dir: str, log_dir: str | None, pending: int = 0,
                       record_drops: Counter | None = None, read_rows: int = 0) -> dict:
    """The report of a crawl (from its log) or of an import (pipelines/archive_import.py; no log:
    `record_drops` counts the records that gave no page, by reason, and `read_rows` the pages read
    before the same URL in two work items was kept once)."""
    stats = ReportStats()
    samples = Samples()
    crawl = stats.stage("crawl")
    status, hosts_fetched, hosts = Counter(), Counter(), {}
    lat, total_bytes, rendered, fetched, skipped, deferred = [], 0, 0, 0, 0, 0
    rows = ShardDataset(log_dir).iter_rows(LOG_COLUMNS) if log_dir else []
    for r in rows:
        if r["status"] is not None:
            status[str(r["status"])] += 1
        if r["decision"] == "deferred":
            deferred += 1
            stats.stage("deferred").record(False, r["reason"])
            continue
        kept = r["decision"] == "fetched"
        scores = {}
        if r["fetch_ms"] is not None:
            scores["fetch_ms"] = r["fetch_ms"]
        crawl.record(kept, r["reason"], scores, ranges={"fetch_ms": (0.0, 5000.0)})
        hosts.setdefault(r["host"] or "(none)", []).append((kept, r["reason"]))
        if kept:
            fetched += 1
            hosts_fetched[r["host"]] += 1
            lat.append(r["fetch_ms"] or 0.0)
            total_bytes += r["bytes"] or 0
            rendered += bool(r["rendered"])
        else:
            skipped += 1
            samples.add(r["reason"] or "unspecified", r["url"] or "", r)
    for h in sorted(hosts, key=lambda h: (-len(hosts[h]), h))[:MAX_HOST_STAGES]:
        st = stats.stage(f"host {h}")
        for kept, reason in hosts[h]:
            st.record(kept, reason)
    pages = ShardDataset(pages_dir)
    n_pages = len(pages)
    training, noindex, with_text, n_img, n_tab = 0, 0, 0, 0, 0
    page_hosts: set = set()
    for b in pages.iter_batches(["training_allowed", "robots_noindex", "text", "images", "tables", "rendered", "host"]):
        for r in b.to_pylist():
            page_hosts.add(r["host"])
            training += bool(r["training_allowed"])
            noindex += bool(r["robots_noindex"])
            with_text += bool(r["text"])
            n_img += len(r["images"] or [])
            n_tab += len(r["tables"] or [])
            if log_dir is None:
                fetched += 1
                rendered += bool(r["rendered"])
    if log_dir is None and record_drops is not None:
        drops = Counter(record_drops)
        if read_rows > n_pages:
            drops["duplicate_url"] += read_rows - n_pages   # the same URL in two files (or ranges)
        crawl.rows_in, crawl.kept = n_pages + sum(drops.values()), n_pages
        crawl.dropped.update(drops)
        skipped = sum(drops.values())
    stats.counters = Counter()  # keep ReportStats JSON small: details go to info
    summary = {
        "pages": n_pages, "fetched": fetched, "skipped": skipped, "deferred": deferred, "pending": pending,
        "status_codes": dict(sorted(status.items())), "render_share": round(rendered / fetched, 4) if fetched else 0.0,
        "rendered": rendered, "bytes": total_bytes, "latency_ms_p50": _pct(lat, 0.5), "latency_ms_p95": _pct(lat, 0.95),
        "training_allowed": training, "noindex": noindex, "pages_with_text": with_text, "images": n_img,
        "tables": n_tab, "hosts": len(hosts) or len(hosts_fetched) or len(page_hosts),
        "skipped_by_reason": dict(sorted(crawl.dropped.items())),
    }
    stats.info.update({"crawl": summary})
    write_report(pages_dir, stats, samples)
    return summary
