"""Render `_report/index.html` for a dataset: one static page that opens from disk.

Funnel per stage, drop reasons, score histograms (PNGs drawn by pipelines/report_plots.py), registered figures (contact
sheets, loss curves) and sample rows per drop reason. Every string from the data is HTML-escaped:
crawled text must show as text, never run.
"""
from __future__ import annotations

import html
import json
import os
import tempfile
from typing import Any

from corpus import objectstore
from corpus.manifest import manifest_path, read_manifest
from corpus.report import ReportStats, read_report, read_samples, report_dir
from pipelines.report_plots import funnel_png, histogram_png

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.5rem} h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0} td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4} .num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;border:1px solid #eee} .sample{font-family:ui-monospace,monospace;font-size:.8rem;white-space:pre-wrap;
max-height:12rem;overflow:auto;background:#fafafa;border:1px solid #eee;padding:.4rem;margin:.3rem 0}
figure{margin:1rem 0} figcaption{color:#555;font-size:.9rem}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _plot_funnel(stats: ReportStats, path: str) -> None:
    names = list(stats.stages)
    funnel_png(names, [stats.stages[n].rows_in for n in names], [stats.stages[n].kept for n in names], path)


def _plot_hist(stage: str, name: str, h: dict, path: str) -> None:
    histogram_png(f"{stage}: {name}", h["edges"], h["counts"], path)


def _safe_name(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def render_report(dataset_dir: str) -> str:
    """Write plots and index.html under the dataset's report dir; return the page's path (or URI).

    A dataset on object storage is rendered into a local temporary directory and then uploaded:
    the figures first, index.html last, so the page never links to a figure that is not there yet."""
    if not objectstore.is_remote(dataset_dir):
        return _render(dataset_dir, report_dir(dataset_dir))
    with tempfile.TemporaryDirectory(prefix="cidermill-report-") as tmp:
        _render(dataset_dir, tmp)
        rdir = report_dir(dataset_dir)
        objectstore.upload_dir(os.path.join(tmp, "plots"), f"{rdir}/plots")
        with open(os.path.join(tmp, "index.html"), "rb") as f:
            objectstore.write_bytes(f"{rdir}/index.html", f.read())
    return f"{rdir}/index.html"


def _render(dataset_dir: str, rdir: str) -> str:
    """Read the report of `dataset_dir` (local or remote); write plots/ and index.html under local `rdir`."""
    stats = read_report(dataset_dir)
    samples = read_samples(dataset_dir)
    plots = os.path.join(rdir, "plots")
    os.makedirs(plots, exist_ok=True)
    remote = objectstore.is_remote(dataset_dir)
    has_manifest = (objectstore.exists if remote else os.path.exists)(manifest_path(dataset_dir))
    manifest = read_manifest(dataset_dir) if has_manifest else None
    where = dataset_dir.rstrip("/") if remote else os.path.abspath(dataset_dir)

    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>cidermill report: {_e(where.rsplit('/', 1)[-1])}</title>",
             f"<style>{CSS}</style></head><body>",
             f"<h1>cidermill report — {_e(where)}</h1>"]
    if manifest is not None:
        parts.append(f"<p>kind <b>{_e(manifest.kind)}</b>, {manifest.rows} rows in {len(manifest.shards)} shard(s); "
                     f"created {_e(manifest.provenance.get('created', '?'))}, version {_e(manifest.provenance.get('version', '?'))}, "
                     f"git {_e(str(manifest.provenance.get('git', ''))[:10])}</p>")
    if stats.info:
        parts.append("<h2>Summary</h2><table>")
        for k, v in stats.info.items():
            parts.append(f"<tr><th>{_e(k)}</th><td>{_e(json.dumps(v, ensure_ascii=False, default=str) if not isinstance(v, str) else v)}</td></tr>")
        parts.append("</table>")

    if stats.stages:
        _plot_funnel(stats, os.path.join(plots, "funnel.png"))
        parts.append("<h2>Stage funnel</h2><img alt='stage funnel' src='plots/funnel.png'>")
        parts.append("<table><tr><th>stage</th><th>rows in</th><th>kept</th><th>dropped</th><th>drop reasons</th></tr>")
        for name, st in stats.stages.items():
            reasons = ", ".join(f"{_e(r)}: {n}" for r, n in sorted(st.dropped.items(), key=lambda t: -t[1]))
            parts.append(f"<tr><td>{_e(name)}</td><td class=num>{st.rows_in}</td><td class=num>{st.kept}</td>"
                         f"<td class=num>{sum(st.dropped.values())}</td><td>{reasons}</td></tr>")
        parts.append("</table>")
        counters = [(n, st.counters) for n, st in stats.stages.items() if st.counters]
        if counters:
            parts.append("<h2>Counters</h2><table><tr><th>stage</th><th>counter</th><th>value</th></tr>")
            for n, c in counters:
                for k, v in sorted(c.items()):
                    parts.append(f"<tr><td>{_e(n)}</td><td>{_e(k)}</td><td class=num>{v}</td></tr>")
            parts.append("</table>")
        hist_imgs = []
        for name, st in stats.stages.items():
            for score, h in st.histograms.items():
                fn = f"hist-{_safe_name(name)}-{_safe_name(score)}.png"
                _plot_hist(name, score, h.to_json(), os.path.join(plots, fn))
                hist_imgs.append(f"<img alt='{_e(name)} {_e(score)} histogram' src='plots/{_e(fn)}' style='width:32%'>")
        if hist_imgs:
            parts.append("<h2>Score histograms</h2>" + "".join(hist_imgs))

    if stats.figures:
        parts.append("<h2>Figures</h2>")
        for f in stats.figures:
            parts.append(f"<figure><img alt='{_e(f.get('title', ''))}' src='{_e(f['path'])}'>"
                         f"<figcaption><b>{_e(f.get('title', ''))}</b> {_e(f.get('caption', ''))}</figcaption></figure>")

    if samples:
        parts.append("<h2>Dropped samples by reason</h2>")
        for reason, rows in samples.items():
            parts.append(f"<h3>{_e(reason)} ({len(rows)} shown)</h3>")
            for r in rows:
                body = json.dumps(r.get("row", r), ensure_ascii=False, indent=1, default=str)
                if len(body) > 4000:
                    body = body[:4000] + "…"
                parts.append(f"<div class=sample>{_e(body)}</div>")
    parts.append("</body></html>")
    out = os.path.join(rdir, "index.html")
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    os.replace(tmp, out)
    return out
