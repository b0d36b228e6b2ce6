"""What the images stage's report records: events for the per-stage stats, dropped-row samples,
the CLIP-score histogram and one contact sheet per drop reason (imagetext/contact_sheet.py)."""
from __future__ import annotations

import math
import os
import tempfile
from typing import Any

from corpus import objectstore
from corpus.report import ReportStats, reason_filename, report_dir, sample_rank
from imagetext.contact_sheet import HIST_BINS, contact_sheet, hist_bin, score_histogram, thumbnail

Event = tuple[str, bool, str | None, dict[str, float]]   # (stage, kept, reason, scores)
SCORE_RANGES = {"clip_score": (-1.0, 1.0)}


def image_event(info: dict[str, Any]) -> Event:
    return ("images", info.get("reason") is None, info.get("reason"), {})


def pair_events(row: dict[str, Any]) -> list[Event]:
    """A final pair counts in its text source's stage, in "pairs", and once more if PII was scrubbed."""
    kept, reason = row["drop_reason"] is None, row["drop_reason"]
    scores = {"clip_score": row["clip_score"]} if row["clip_score"] is not None else {}
    events = [(f"pairs_{row['text_source']}", kept, reason, scores), ("pairs", kept, reason, scores)]
    return events + ([("pairs_with_pii_scrubbed", True, None, {})] if row["pii_count"] else [])


def record_event(acc: ReportStats, ev: Event) -> ReportStats:
    stage, kept, reason, scores = ev
    acc.stage(stage).record(kept, reason, scores, ranges=SCORE_RANGES)
    return acc


# -- the CLIP-score histogram: [kept counts, dropped counts] over imagetext.contact_sheet's fine bins
def empty_hist() -> list[list[int]]:
    return [[0] * HIST_BINS, [0] * HIST_BINS]


def add_to_hist(acc: list[list[int]], score: float, kept: bool) -> list[list[int]]:
    b = hist_bin(score)
    if b >= 0:
        acc[0 if kept else 1][b] += 1
    return acc


def merge_hists(accs) -> list[list[int]]:
    out = empty_hist()
    for a in accs:
        for j in range(2):
            out[j] = [x + y for x, y in zip(out[j], a[j])]
    return out


# -- samples and contact sheets ------------------------------------------------------------------
def sample_row(row: dict[str, Any]) -> dict[str, Any]:
    """A dropped pair as the report's samples show it: everything but the image bytes."""
    out = {k: v for k, v in row.items() if k not in ("image", "qa")}
    out["image_bytes"] = len(row["image"]) if row.get("image") else 0
    return out


def sheet_entry(row: dict[str, Any]) -> tuple[str, tuple]:
    """(sheet name, sortable tile): tiles are chosen by a hash of the pair id (deterministic)."""
    return row["drop_reason"] or "kept", (sample_rank(row["id"]), row["id"], row["image"], tile_label(row))


def tile_label(row: dict[str, Any]) -> str:
    s = row.get("clip_score")
    score = "" if s is None or (isinstance(s, float) and math.isnan(s)) else f"{s:.3f} "
    return f"{score}{row.get('text_source', '')}: {row.get('text') or '(no text)'}"


def write_figures(sheets: list, hist: list, cut: float, pairs_dir: str, model_name: str | None) -> ReportStats:
    """Draw the histogram and the contact sheets into the report's plots/; the stats that list them.
    For a dataset on object storage they are drawn in a temporary directory and uploaded."""
    rdir = report_dir(pairs_dir)
    if not objectstore.is_remote(rdir):
        return _draw_figures(sheets, hist, cut, rdir, model_name)
    with tempfile.TemporaryDirectory(prefix="cidermill-figures-") as tmp:
        stats = _draw_figures(sheets, hist, cut, tmp, model_name)
        objectstore.upload_dir(os.path.join(tmp, "plots"), f"{rdir}/plots")
    return stats


def _draw_figures(sheets: list, hist: list, cut: float, rdir: str, model_name: str | None) -> ReportStats:
    stats = ReportStats()
    plots = os.path.join(rdir, "plots")
    score_histogram(hist[0], hist[1], os.path.join(plots, "clip_score_hist.png"),
                    cut if math.isfinite(cut) else None, title=f"CLIP score ({model_name or 'model'})")
    stats.add_figure("plots/clip_score_hist.png", "CLIP score histogram",
                     "cosine(image, text) of every scored pair; green kept, red dropped (any reason); "
                     "dashed line: the CLIP cut")
    for reason, tops in sorted(sheets, key=lambda t: (t[0] != "kept", t[0])):
        tiles = [(thumbnail(img), label) for _, _, img, label in sorted(tops)]
        name = f"plots/sheet_{reason_filename(reason)}.png"
        title = f"{'kept pairs' if reason == 'kept' else 'dropped: ' + reason} ({len(tiles)} samples)"
        contact_sheet(tiles, os.path.join(rdir, name), title)
        stats.add_figure(name, f"Contact sheet: {reason}", "samples chosen by a hash of the pair id (deterministic)")
    stats.info["clip_cut"] = cut if math.isfinite(cut) else None
    stats.info["clip_model"] = model_name
    return stats
