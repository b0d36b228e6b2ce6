"""Arrow schemas the crawl writes besides pages: the crawl log and the frontier.

Crawl log: one row per URL decision (fetched, skipped with a reason, deferred for retry), so a
reviewer can answer "why was this URL not crawled" for every URL the crawler ever saw.
Frontier: the queue of URLs still to fetch, written per wave so a crawl can resume.
"""
from __future__ import annotations

import pyarrow as pa

CRAWL_LOG = pa.schema([
    ("id", pa.string()),                 # unique per decision (see crawl.crawler.log_id)
    ("url", pa.string()),                # canonical URL (or the raw href for invalid links)
    ("host", pa.string()),               # host[:port], the URL's authority (crawl.urls.authority_of)
    ("depth", pa.int32()),
    ("parent", pa.string()),             # page the URL was found on (null for seeds)
    ("wave", pa.int32()),
    ("decision", pa.string()),           # fetched | skipped | deferred
    ("reason", pa.string()),             # null when fetched; robots, private_address, too_large, ...
    ("detail", pa.string()),
    ("status", pa.int32()),
    ("fetch_ms", pa.float64()),
    ("bytes", pa.int64()),
    ("rendered", pa.bool_()),
    ("render_reason", pa.string()),
    ("training_allowed", pa.bool_()),
    ("robots_noindex", pa.bool_()),
    ("robots_nofollow", pa.bool_()),
    ("at", pa.string()),                 # ISO-8601 UTC
    ("priority", pa.float64()),          # fetched URLs: the frontier priority they were picked with
    ("priority_parts", pa.string()),     # JSON: what made it (shape, quality, language, diversity, anchor)
])

FRONTIER = pa.schema([
    ("id", pa.string()),                 # sha1 of url
    ("url", pa.string()),
    ("host", pa.string()),               # host[:port], the URL's authority (crawl.urls.authority_of)
    ("depth", pa.int32()),
    ("priority", pa.float64()),
    ("parent", pa.string()),
    ("source", pa.string()),             # seed | link | sitemap | redirect | retry
    ("retries", pa.int32()),
    ("priority_parts", pa.string()),     # JSON parts of `priority` (pipelines.crawl_order)
])

LINKS = pa.schema([
    ("id", pa.string()),                 # sha1(parent, url, source)
    ("url", pa.string()),
    ("depth", pa.int32()),
    ("parent", pa.string()),
    ("source", pa.string()),
    ("retries", pa.int32()),
])
