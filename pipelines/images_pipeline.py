"""`cidermill images`: crawled pages -> image-text pairs and interleaved documents (Beam).

    pages ─ refs (one per <img>) ─ unique srcs by host ─ fetch (crawl rules) + Pillow checks
          └──────────────── join ───────────────┘
    pairs: alt / caption text checks, PII, language ─ CLIP score ─ image dedup (best-scoring survivor)
           ─ global CLIP cut ─ shards
    interleaved: page text split at image positions, an image stays if CLIP(image, its context) passes

Every pair row is written, kept or dropped (`drop_reason`), with every score it got; the report
adds the CLIP-score histogram and contact sheets per reason. Determinism: fetch order per host is
sorted, CLIP batches are formed from a hash of the row key (not arrival order), dedup survivors
and the top-p cut are global and order-free. Neither gathers the pairs on one worker: dedup is
keyed work (sha256 groups, pHash band buckets, then connected components), the top-p cut two
mergeable combines (filters/image_dedup.py, filters/clip_select.py say how).

Plain entry point for other code (the demo): `run_images(pages_dir, out_dir, ...)`.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable

import pyarrow as pa

from corpus.errors import CidermillError
from corpus.report import ReportStats, StageStats, merge_all, sample_rank
from corpus.schemas import INTERLEAVED, PAIRS
from filters.alt_text import AltTextConfig, alt_text_reason, normalize
from filters.clip_select import (ClipSelectConfig, base_cut, clip_reason, coarse_bin, cut_from_bin, locate_rank,
                                 merge_counts, resolve_threshold, top_candidate)
from filters.image_dedup import band_entries, bucket_edges, duplicate_label, node_key, star_edges
from filters.image_check import ImageCheckConfig, check_image
from crawl.image_fetch import ImageFetchConfig
from filters.ocr_text_rich import TextRichConfig

# Columns this stage adds after the shared PAIRS / INTERLEAVED columns (contract: add, never rename).
PAIRS_OUT = pa.schema(list(PAIRS) + [
    pa.field("image_url", pa.string()),
    pa.field("page_id", pa.string()),
    pa.field("orig_format", pa.string()),
    pa.field("orig_width", pa.int32()),
    pa.field("orig_height", pa.int32()),
    pa.field("language_score", pa.float32()),
    pa.field("pii_count", pa.int32()),
    pa.field("ocr_text", pa.string()),    # --ocr: text of a text-rich image (filters/ocr_text_rich.py)
    pa.field("ocr_score", pa.float32()),  # --ocr: mean OCR word confidence 0-1 (null: not OCR'd)
    pa.field("ocr_chars", pa.int32()),    # --ocr: confidently read characters
])
INTERLEAVED_OUT = pa.schema(list(INTERLEAVED) + [
    pa.field("images_in", pa.int32()),
    pa.field("images_kept", pa.int32()),
])
PAGE_COLUMNS = ["id", "url", "final_url", "text", "images", "language_hint", "training_allowed"]

R_PAGE_OPTOUT = "page_training_optout"
R_IMAGE_OPTOUT = "image_training_optout"
R_NO_IMAGE = "image_missing_src"
CONTEXT_CHARS = 200


@dataclass
class ImagesConfig:
    image: ImageCheckConfig = field(default_factory=ImageCheckConfig)
    alt: AltTextConfig = field(default_factory=AltTextConfig)
    fetch: ImageFetchConfig = field(default_factory=ImageFetchConfig)
    clip: ClipSelectConfig = field(default_factory=ClipSelectConfig)
    clip_model: str | None = None             # None: read from the checkpoint's metadata
    clip_checkpoint: str | None = None        # None with clip_model: random init (benchmarks only)
    clip_batch_size: int = 64
    clip_group_batches: int = 16              # batches per scoring work item (fewer partial batches)
    clip_threads: int | None = None
    warc_files: tuple[str, ...] | None = None  # read images from these WARC files instead of fetching them
    warc_missing: str = "drop"                 # srcs not in the WARC files: "drop" (image_not_in_warc) or "fetch"
    interleaved_threshold: float | None = 0.1  # CLIP(image, surrounding text) needed to stay in a document
    near_dup_distance: int = 4                 # pHash Hamming bits; -1 turns near dedup off
    languages: tuple[str, ...] | None = None   # keep only pairs whose text is in these languages
    pii: bool = True                           # scrub PII in pair texts and interleaved text
    captions: bool = True                      # also make (image, figcaption) pairs
    store_dropped_images: bool = True          # keep image bytes on dropped rows (re-thresholding)
    samples_per_reason: int = 20
    sheet_tiles: int = 24
    ocr: TextRichConfig | None = None          # OCR images that passed their checks (off: unchanged speed)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["languages"] = list(self.languages) if self.languages else None
        d["warc_files"] = list(self.warc_files) if self.warc_files else None
        return d


# ---------------------------------------------------------------------------------------------
# plain functions (no Beam): one page, one image, one pair
# ---------------------------------------------------------------------------------------------
def page_refs(page: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per <img> reference of a page, in document order."""
    out = []
    for idx, im in enumerate(page.get("images") or []):
        out.append({
            "page_id": page["id"], "page_url": page.get("final_url") or page.get("url"), "idx": idx,
            "src": (im.get("src") or "").strip(), "alt": im.get("alt"), "caption": im.get("caption"),
            "text_before": im.get("text_before") or "", "text_after": im.get("text_after") or "",
            "position": im.get("position"), "page_language": page.get("language_hint"),
            "page_training_allowed": page.get("training_allowed") is not False,
        })
    return out


def fetch_and_check(src: str, fetcher, cfg: ImagesConfig) -> dict[str, Any]:
    """Fetch one image URL through the crawl rules and validate it; a dict, never an exception."""
    res = fetcher.fetch(src)
    return check_body(src, res.final_url, res.status, res.content_type, res.body, res.training_allowed,
                      res.reason, res.detail, cfg, fetch_ms=res.fetch_ms)


def check_body(src: str, final_url: str, status: int, content_type: str, body: bytes, training_allowed: bool,
               reason: str | None, detail: str, cfg: ImagesConfig, fetch_ms: float | None = None) -> dict[str, Any]:
    """The info dict of one image, fetched live or read from a WARC record: Pillow checks on the body."""
    info: dict[str, Any] = {"src": src, "final_url": final_url, "status": status, "content_type": content_type,
                            "fetch_ms": None if fetch_ms is None else round(fetch_ms, 1),
                            "training_allowed": training_allowed, "fetch_reason": reason,
                            "reason": reason, "detail": detail}
    if reason:
        return info
    chk = check_image(body, cfg.image, content_type)
    info.update({"reason": chk.reason, "detail": chk.detail, "orig_format": chk.orig_format,
                 "orig_width": chk.orig_width, "orig_height": chk.orig_height, "animated": chk.animated,
                 "image": chk.image, "mime": chk.mime, "width": chk.width, "height": chk.height,
                 "sha256": chk.sha256, "phash": chk.phash, "decode_ms": round(chk.decode_ms, 2),
                 "bytes_in": len(body)})
    return info


def warc_infos(item: tuple[str, dict[str, Any]], cfg: ImagesConfig):
    """(url key, {"src": [srcs], "rec": [records]}) -> (src, info) for each src with a record; srcs
    without one go to the "missing" output."""
    import apache_beam as beam  # noqa: PLC0415

    from crawl.image_warc import pick_record  # noqa: PLC0415

    _, grouped = item
    srcs = sorted(set(grouped["src"]))
    if not srcs:
        return
    rec = pick_record(grouped["rec"])
    for src in srcs:
        if rec is None:
            yield beam.pvalue.TaggedOutput("missing", src)
            continue
        try:
            info = check_body(src, rec["url"], rec["status"], rec["content_type"], rec["body"],
                              rec["training_allowed"], rec["reason"], rec["detail"], cfg)
        except Exception as e:  # noqa: BLE001  (a bug on one image must not kill the job)
            info = {"src": src, "reason": "image_error", "detail": f"{type(e).__name__}: {e}"[:200]}
        info["from_warc"] = True
        yield src, info


def pair_id(ref: dict[str, Any], source: str) -> str:
    return hashlib.sha1(f"{ref['page_id']}\n{ref['idx']}\n{ref['src']}\n{source}".encode("utf-8")).hexdigest()


def make_pairs(ref: dict[str, Any], info: dict[str, Any] | None, cfg: ImagesConfig) -> list[dict[str, Any]]:
    """Pair rows of one image reference (alt always, caption when present), with first drop reason."""
    from filters.alt_text_lang_pii import R_LANGUAGE, scrub_pii, text_language  # noqa: PLC0415

    info = info or {"reason": R_NO_IMAGE, "detail": "no src"}
    sources = [("alt", ref["alt"])]
    if cfg.captions and normalize(ref.get("caption")):
        sources.append(("caption", ref["caption"]))
    rows = []
    ocr_cols: dict[str, Any] = {}
    if cfg.ocr is not None and info.get("image") is not None and not info.get("reason") \
            and ref["page_training_allowed"] and info.get("training_allowed", True):
        from filters.ocr_text_rich import read_text  # noqa: PLC0415
        ocr_cols = read_text(info["image"], ref.get("page_language"), cfg.ocr)  # the page's language picks the model
        if cfg.pii and ocr_cols.get("ocr_text"):
            ocr_cols["ocr_text"] = scrub_pii(ocr_cols["ocr_text"])[0]
    for source, raw in sources:
        text = normalize(raw)
        reason = None
        pii_n = 0
        if text and cfg.pii:
            text, counts = scrub_pii(text)
            pii_n = sum(counts.values())
        lang, lang_score = (text_language(text, ref.get("page_language")) if text else
                            (ref.get("page_language"), 0.0))
        if not ref["page_training_allowed"]:
            reason = R_PAGE_OPTOUT
        elif info.get("reason"):
            reason = info["reason"]
        elif not info.get("training_allowed", True):
            reason = R_IMAGE_OPTOUT
        if reason is None:
            reason = alt_text_reason(text, cfg.alt)
            if reason and source == "caption":
                reason = reason.replace("alt_", "caption_", 1)
        if reason is None and cfg.languages and lang not in cfg.languages:
            reason = R_LANGUAGE
        has_image = info.get("image") is not None
        keep_bytes = has_image and (reason is None or cfg.store_dropped_images)
        meta = {"alt_raw": ref["alt"], "caption": ref.get("caption"), "position": ref.get("position"),
                "text_before": (ref.get("text_before") or "")[-CONTEXT_CHARS:],
                "text_after": (ref.get("text_after") or "")[:CONTEXT_CHARS], "detail": info.get("detail") or "",
                "status": info.get("status"), "animated": info.get("animated"),
                "ocr_reason": ocr_cols.get("ocr_reason")}   # no timings: output is deterministic
        rows.append({
            "id": pair_id(ref, source), "image": info.get("image") if keep_bytes else None,
            "mime": info.get("mime"), "width": info.get("width"), "height": info.get("height"),
            "sha256": info.get("sha256"), "phash": info.get("phash"), "text": text, "text_source": source,
            "page_url": ref["page_url"], "language": lang, "clip_score": None, "drop_reason": reason, "qa": [],
            "meta_json": None, "image_url": ref["src"], "page_id": ref["page_id"],
            "orig_format": info.get("orig_format"), "orig_width": info.get("orig_width"),
            "orig_height": info.get("orig_height"), "language_score": round(float(lang_score), 4),
            "pii_count": pii_n, "ocr_text": ocr_cols.get("ocr_text"), "ocr_score": ocr_cols.get("ocr_score"),
            "ocr_chars": ocr_cols.get("ocr_chars"), "_meta": meta, "_has_image": has_image, "_img": info.get("image"),
        })
    return rows


def context_text(ref: dict[str, Any]) -> str:
    """The text an interleaved image is judged against: caption, then the nearest text around it."""
    parts = [normalize(ref.get("caption")), normalize((ref.get("text_before") or "")[-CONTEXT_CHARS:]),
             normalize((ref.get("text_after") or "")[:CONTEXT_CHARS])]
    return " ".join(p for p in parts if p)


def interleaved_doc(page: dict[str, Any], refs: list[tuple[dict, dict | None]], scores: dict[int, float],
                    cfg: ImagesConfig) -> tuple[dict[str, Any], list[tuple[bool, str | None, float | None]]]:
    """One interleaved document: text pieces split at image positions, kept images in place.

    Returns the row and, per image, (kept, reason, score) for the report."""
    from filters.alt_text_lang_pii import scrub_pii  # noqa: PLC0415

    text = page.get("text") or ""
    n = len(text)
    order = sorted(refs, key=lambda ri: (ri[0]["position"] if ri[0]["position"] is not None else n, ri[0]["idx"]))
    items: list[dict[str, Any]] = []
    pos = 0
    outcomes = []
    cut = cfg.interleaved_threshold

    def add_text(piece: str) -> None:
        piece = piece.strip()
        if piece:
            if cfg.pii:
                piece = scrub_pii(piece)[0]
            items.append({"type": "text", "text": piece, "image_sha256": None, "image_src": None,
                          "clip_score": None})

    kept = 0
    for ref, info in order:
        p = ref["position"] if ref["position"] is not None else n
        p = min(max(p, pos), n)
        add_text(text[pos:p])
        pos = p
        score = scores.get(ref["idx"])
        reason = None
        if not ref["page_training_allowed"]:
            reason = R_PAGE_OPTOUT
        elif info is None or info.get("reason"):
            reason = (info or {}).get("reason") or R_NO_IMAGE
        elif not info.get("training_allowed", True):
            reason = R_IMAGE_OPTOUT
        elif cut is not None and (score is None or math.isnan(score) or score < cut):
            reason = "interleaved_low_clip_score"
        outcomes.append((reason is None, reason, score))
        if reason is None:
            kept += 1
            items.append({"type": "image", "text": normalize(ref.get("alt")) or None,
                          "image_sha256": info["sha256"], "image_src": ref["src"],
                          "clip_score": None if score is None else float(score)})
    add_text(text[pos:])
    row = {"id": page["id"], "url": page.get("final_url") or page.get("url"), "items": items,
           "language": page.get("language_hint"), "images_in": len(refs), "images_kept": kept}
    return row, outcomes


def apply_duplicate(row: dict[str, Any], dup: tuple[str, str] | None) -> dict[str, Any]:
    """Mark a pair that is still kept as a duplicate (reason, survivor id), if it is one."""
    if dup is None or row["drop_reason"] is not None:
        return row
    return dict(row, drop_reason=dup[0], _meta=dict(row["_meta"], duplicate_of=dup[1]))


def finalize_pair(row: dict[str, Any], cut: float) -> dict[str, Any]:
    """Apply the CLIP cut; fold private fields into meta_json."""
    row = dict(row)
    meta = row.pop("_meta")
    row.pop("_has_image", None)
    row.pop("_img", None)
    if row["drop_reason"] is None:
        row["drop_reason"] = clip_reason(row["clip_score"], cut)
    row["meta_json"] = json.dumps({k: v for k, v in meta.items() if v not in (None, "")}, ensure_ascii=False,
                                  sort_keys=True)
    return row


# ---------------------------------------------------------------------------------------------
# Beam
# ---------------------------------------------------------------------------------------------
def _beam_parts():
    import apache_beam as beam  # noqa: PLC0415

    class FetchHostDoFn(beam.DoFn):
        """(host, [src]) -> (src, info); one host's images one at a time, in sorted order."""

        def __init__(self, cfg: ImagesConfig):
            self.cfg = cfg

        def setup(self):
            from crawl.image_fetch import ImageFetcher  # noqa: PLC0415
            self.fetcher = ImageFetcher(self.cfg.fetch)

        def process(self, element):
            _, srcs = element
            for src in sorted(set(srcs)):
                try:
                    info = fetch_and_check(src, self.fetcher, self.cfg)
                except Exception as e:  # noqa: BLE001  (a bug in one fetch must not kill the job)
                    info = {"src": src, "reason": "fetch_error", "detail": f"{type(e).__name__}: {e}"[:200]}
                yield src, info

        def teardown(self):
            f = getattr(self, "fetcher", None)
            if f is not None:
                f.close()

    class ClipScoreDoFn(beam.DoFn):
        """(bucket, [(key, image, text)]) -> (key, score); one model per worker, loaded in setup."""

        def __init__(self, cfg: ImagesConfig):
            self.cfg = cfg

        def setup(self):
            from filters.clip_score import shared_scorer  # noqa: PLC0415
            self.scorer = shared_scorer(self.cfg.clip_model, self.cfg.clip_checkpoint,
                                        batch_size=self.cfg.clip_batch_size, threads=self.cfg.clip_threads)

        def process(self, element):
            _, reqs = element
            reqs = sorted(reqs, key=lambda r: r[0])
            bs = self.cfg.clip_batch_size
            for i in range(0, len(reqs), bs):
                chunk = reqs[i:i + bs]
                scores = self.scorer.score([r[1] for r in chunk], [r[2] for r in chunk])
                for (key, _, _), s in zip(chunk, scores):
                    yield key, s

    class StatsFn(beam.CombineFn):
        """(stage, kept, reason, scores) events -> one ReportStats."""

        def create_accumulator(self):
            return ReportStats()

        def add_input(self, acc, ev):
            stage, kept, reason, scores = ev
            acc.stage(stage).record(kept, reason, scores, ranges={"clip_score": (-1.0, 1.0)})
            return acc

        def merge_accumulators(self, accs):

            return merge_all(accs)

        def extract_output(self, acc):
            return acc

    class HistFn(beam.CombineFn):
        """(score, kept) -> [kept counts, dropped counts] over the fixed fine bins."""

        def create_accumulator(self):
            from filters.image_contact_sheet import HIST_BINS  # noqa: PLC0415
            return [[0] * HIST_BINS, [0] * HIST_BINS]

        def add_input(self, acc, item):
            from filters.image_contact_sheet import hist_bin  # noqa: PLC0415
            score, kept = item
            b = hist_bin(score)
            if b >= 0:
                acc[0 if kept else 1][b] += 1
            return acc

        def merge_accumulators(self, accs):
            accs = list(accs)
            out = self.create_accumulator()
            for a in accs:
                for j in range(2):
                    out[j] = [x + y for x, y in zip(out[j], a[j])]
            return out

        def extract_output(self, acc):
            return acc

    return beam, FetchHostDoFn, ClipScoreDoFn, StatsFn, HistFn


def _neg_score(s: float | None) -> float:
    return math.inf if s is None or math.isnan(s) else -float(s)


def _bucket(key: str, n: int) -> int:
    import xxhash  # noqa: PLC0415
    return xxhash.xxh64_intdigest(key.encode("utf-8")) % max(1, n)


def _host(src: str) -> str:
    from urllib.parse import urlsplit  # noqa: PLC0415
    try:
        return (urlsplit(src).hostname or "").lower()
    except ValueError:
        return ""


def _sample_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in ("image", "qa")}
    out["image_bytes"] = len(row["image"]) if row.get("image") else 0
    return out


def _tile_label(row: dict[str, Any]) -> str:
    s = row.get("clip_score")
    score = "" if s is None or (isinstance(s, float) and math.isnan(s)) else f"{s:.3f} "
    return f"{score}{row.get('text_source', '')}: {row.get('text') or '(no text)'}"


def _write_figures(sheets: list, hist: list, cut: float, pairs_dir: str, cfg: ImagesConfig,
                   model_name: str | None) -> ReportStats:
    from corpus.report import reason_filename, report_dir  # noqa: PLC0415
    from filters.image_contact_sheet import contact_sheet, score_histogram, thumbnail  # noqa: PLC0415

    stats = ReportStats()
    rdir = report_dir(pairs_dir)
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


def clip_scores(cfg: ImagesConfig):
    """PTransform: (key, image bytes, text) -> (key, cosine). Batches are formed from a hash of the
    key (not arrival order) so scores are bit-identical whatever the runner or worker count."""
    beam, _, ClipScoreDoFn, _, _ = _beam_parts()

    class ClipScores(beam.PTransform):
        def expand(self, reqs):
            # a group holds ~clip_group_batches full batches: only one partial batch per group
            group = cfg.clip_batch_size * max(1, cfg.clip_group_batches)
            n_buckets = (reqs | "CountReqs" >> beam.combiners.Count.Globally()
                         | "NBuckets" >> beam.Map(lambda c: max(1, math.ceil(c / group))))
            return (reqs
                    | "Bucket" >> beam.Map(lambda r, n: (_bucket(r[0], n), r), n=beam.pvalue.AsSingleton(n_buckets))
                    | "GroupBatch" >> beam.GroupByKey()
                    | "ClipScore" >> beam.ParDo(ClipScoreDoFn(cfg)))

    return ClipScores()


def image_duplicates(max_distance: int):
    """PTransform: (node, sha256, phash) of every dedup candidate (node = filters.image_dedup.node_key)
    -> (pair id, (reason, survivor id)) for each duplicate. Keyed work only: sha256 groups and pHash
    band buckets give edges, pipelines/dedup.py's ConnectedComponents closes them (root = smallest
    node = best (score, id) of the cluster)."""
    import apache_beam as beam  # noqa: PLC0415

    from pipelines.dedup import ConnectedComponents  # noqa: PLC0415

    class ImageDuplicates(beam.PTransform):
        def expand(self, cands):
            exact = (cands
                     | "BySha" >> beam.Map(lambda c: ((c[0].split("|", 1)[0], c[1]), c[0]))
                     | "GroupSha" >> beam.GroupByKey()
                     | "ShaEdges" >> beam.FlatMap(lambda kv: star_edges(kv[1])))
            edges = [exact]
            if max_distance >= 0:
                edges.append(cands
                             | "Bands" >> beam.FlatMap(lambda c: band_entries(c[0], c[2], max_distance))
                             | "GroupBand" >> beam.GroupByKey()
                             | "BandEdges" >> beam.FlatMap(lambda kv: bucket_edges(kv[0][1], kv[1], max_distance)))
            return (tuple(edges) | "AllEdges" >> beam.Flatten()
                    | "Components" >> ConnectedComponents()
                    | "Labels" >> beam.FlatMap(lambda nr: [lab] if (lab := duplicate_label(*nr)) else []))

    return ImageDuplicates()


def clip_cut(clip: ClipSelectConfig):
    """PTransform: the CLIP scores of the pairs still kept (float or None) -> one float, the cut
    (filters.clip_select.cutoff's value) from two mergeable combines instead of a list of all scores."""
    import apache_beam as beam  # noqa: PLC0415

    class Counts(beam.CombineFn):
        def create_accumulator(self):
            return {}

        def add_input(self, acc, key):
            acc[key] = acc.get(key, 0) + 1
            return acc

        def merge_accumulators(self, accs):
            return merge_counts(accs)

        def extract_output(self, acc):
            return acc

    class ClipCut(beam.PTransform):
        def expand(self, scores):
            AsSingleton = beam.pvalue.AsSingleton
            if clip.top_percent is None:   # a fixed threshold: nothing to rank
                return (scores | "Count" >> beam.combiners.Count.Globally()
                        | "FixedCut" >> beam.Map(lambda _: base_cut(clip)))
            cands = scores | "Candidates" >> beam.Filter(top_candidate, clip)
            located = (cands | "CoarseBin" >> beam.Map(coarse_bin)
                       | "CoarseCounts" >> beam.CombineGlobally(Counts())
                       | "Locate" >> beam.Map(locate_rank, clip))
            fine = (cands
                    | "InBin" >> beam.Filter(lambda v, loc: loc is not None and coarse_bin(v) == loc[0],
                                             loc=AsSingleton(located))
                    | "FineCounts" >> beam.CombineGlobally(Counts()))
            return located | "CutValue" >> beam.Map(
                lambda loc, f: base_cut(clip) if loc is None else cut_from_bin(f, loc[1], clip), f=AsSingleton(fine))

    return ClipCut()


def build_images_pipeline(p, pages_dir: str, pairs_dir: str, interleaved_dir: str, cfg: ImagesConfig,
                          provenance_pairs: dict, provenance_inter: dict, overwrite: bool = False,
                          model_name: str | None = None):
    from pipelines.report_io import WriteReport  # noqa: PLC0415
    from pipelines.shards_io import ReadShards, WriteShards  # noqa: PLC0415

    beam, FetchHostDoFn, _, StatsFn, HistFn = _beam_parts()
    AsSingleton = beam.pvalue.AsSingleton
    pages = p | "ReadPages" >> ReadShards(pages_dir, columns=PAGE_COLUMNS)
    refs = pages | "Refs" >> beam.FlatMap(page_refs)

    # fetch + check every distinct src once; one host's fetches stay on one worker (politeness).
    # With WARC files, srcs are first looked up there (by canonical URL); the ones not archived are
    # fetched live (warc_missing="fetch") or dropped as image_not_in_warc.
    srcs = (refs
            | "TrainablePages" >> beam.Filter(lambda r: r["page_training_allowed"])   # opted-out: never fetched
            | "Srcs" >> beam.Map(lambda r: r["src"]) | "HasSrc" >> beam.Filter(bool)
            | "DistinctSrc" >> beam.Distinct())
    from_warc = []
    if cfg.warc_files:
        from crawl.image_warc import R_NOT_IN_WARC, iter_warc_images, url_key  # noqa: PLC0415

        fc = cfg.fetch
        recs = (p | "WarcFiles" >> beam.Create(sorted(os.path.abspath(f) for f in cfg.warc_files))
                | "WarcSpread" >> beam.Reshuffle()
                | "WarcImages" >> beam.FlatMap(lambda path: ((r["url"], r) for r in iter_warc_images(
                    path, fc.user_agent, fc.optout_token, fc.max_bytes))))
        keyed = srcs | "SrcKey" >> beam.Map(lambda s: (url_key(s) or "\x00bad:" + s, s))
        looked = ({"src": keyed, "rec": recs} | "JoinWarc" >> beam.CoGroupByKey()
                  | "FromWarc" >> beam.FlatMap(warc_infos, cfg).with_outputs("missing", main="found"))
        from_warc.append(looked.found)
        srcs = looked.missing
        if cfg.warc_missing == "drop":
            from_warc.append(srcs | "NotInWarc" >> beam.Map(
                lambda s: (s, {"src": s, "reason": R_NOT_IN_WARC, "detail": "no record of this URL in the WARC files"})))
            srcs = None
    fetched = []
    if srcs is not None:
        fetched.append(srcs
                       | "ByHost" >> beam.Map(lambda s: (_host(s), s)) | "GroupHost" >> beam.GroupByKey()
                       | "FetchCheck" >> beam.ParDo(FetchHostDoFn(cfg)))
    infos = tuple(from_warc + fetched) | "Infos" >> beam.Flatten()
    joined = ({"ref": refs | "RefBySrc" >> beam.Map(lambda r: (r["src"], r)), "info": infos}
              | "JoinImage" >> beam.CoGroupByKey()
              | "Attach" >> beam.FlatMap(lambda kv: [(r, (list(kv[1]["info"]) or [None])[0] if r["src"] else None)
                                                     for r in kv[1]["ref"]]))

    pairs = joined | "MakePairs" >> beam.FlatMap(lambda ri: make_pairs(ri[0], ri[1], cfg))

    # CLIP requests: every pair with an image and a text, and every interleaved image vs its context
    req_pairs = (pairs
                 | "PairReqs" >> beam.FlatMap(lambda r: [("p:" + r["id"], r["_img"], r["text"])]
                                              if r["_img"] is not None and r["text"] else []))
    req_inter = (joined
                 | "InterReqs" >> beam.FlatMap(lambda ri: [
                     (f"i:{ri[0]['page_id']}:{ri[0]['idx']}", ri[1]["image"], context_text(ri[0]))]
                     if ri[1] is not None and ri[1].get("image") is not None and context_text(ri[0]) else []))
    reqs = (req_pairs, req_inter) | "AllReqs" >> beam.Flatten()
    scores = reqs | "Clip" >> clip_scores(cfg)
    pair_scores = (scores | "PairScores" >> beam.Filter(lambda kv: kv[0].startswith("p:"))
                   | "StripP" >> beam.Map(lambda kv: (kv[0][2:], kv[1])))
    scored = ({"row": pairs | "PairById" >> beam.Map(lambda r: (r["id"], r)), "score": pair_scores}
              | "JoinScore" >> beam.CoGroupByKey()
              | "SetScore" >> beam.FlatMap(lambda kv: [dict(r, clip_score=(list(kv[1]["score"]) or [None])[0])
                                                       for r in kv[1]["row"]]))

    # exact + near image dedup among pairs that passed so far. The survivor of a cluster is the pair
    # whose text matches the image best (highest CLIP score), ties by id: deterministic.
    dups = (scored
            | "DedupCand" >> beam.Filter(lambda r: r["drop_reason"] is None and r["_has_image"])
            | "DedupNode" >> beam.Map(lambda r: (node_key(r["text_source"], _neg_score(r["clip_score"]), r["id"],
                                                          r["sha256"]), r["sha256"], r["phash"]))
            | "Dedup" >> image_duplicates(cfg.near_dup_distance))
    deduped = ({"row": scored | "RowById" >> beam.Map(lambda r: (r["id"], r)), "dup": dups}
               | "JoinDup" >> beam.CoGroupByKey()
               | "ApplyDup" >> beam.FlatMap(lambda kv: [apply_duplicate(r, (list(kv[1]["dup"]) or [None])[0])
                                                        for r in kv[1]["row"]]))
    cut = (deduped
           | "CutCand" >> beam.Filter(lambda r: r["drop_reason"] is None)
           | "CutScores" >> beam.Map(lambda r: r["clip_score"])
           | "Cut" >> clip_cut(cfg.clip))
    final = deduped | "Finalize" >> beam.Map(finalize_pair, cut=AsSingleton(cut))

    # interleaved documents
    inter_scores = (scores | "InterScores" >> beam.Filter(lambda kv: kv[0].startswith("i:"))
                    | "InterKey" >> beam.Map(lambda kv: (kv[0].split(":")[1], (int(kv[0].split(":")[2]), kv[1]))))
    docs_out = ({"page": pages | "PageById" >> beam.Map(lambda pg: (pg["id"], {k: pg.get(k) for k in
                                                                           ("id", "url", "final_url", "text",
                                                                            "language_hint")})),
                 "refs": joined | "RefByPage" >> beam.Map(lambda ri: (ri[0]["page_id"], ri)),
                 "scores": inter_scores}
                | "JoinDoc" >> beam.CoGroupByKey()
                | "BuildDoc" >> beam.FlatMap(lambda kv: [interleaved_doc(pg, list(kv[1]["refs"]),
                                                                         dict(kv[1]["scores"]), cfg)
                                                         for pg in kv[1]["page"]]))
    docs = docs_out | "DocRows" >> beam.Map(lambda t: t[0])
    docs | "WriteInterleaved" >> WriteShards(interleaved_dir, "interleaved", INTERLEAVED_OUT,
                                             provenance=provenance_inter, overwrite=overwrite)

    # report of the pairs dataset
    img_events = infos | "ImgEvents" >> beam.Map(lambda kv: ("images", kv[1].get("reason") is None,
                                                             kv[1].get("reason"), {}))
    pair_events = final | "PairEvents" >> beam.Map(
        lambda r: (f"pairs_{r['text_source']}", r["drop_reason"] is None, r["drop_reason"],
                   {"clip_score": r["clip_score"]} if r["clip_score"] is not None else {}))
    all_events = final | "AllEvents" >> beam.Map(
        lambda r: ("pairs", r["drop_reason"] is None, r["drop_reason"],
                   {"clip_score": r["clip_score"]} if r["clip_score"] is not None else {}))
    pii_events = final | "PiiEvents" >> beam.FlatMap(
        lambda r: [("pairs_with_pii_scrubbed", True, None, {})] if r["pii_count"] else [])
    stats = ((img_events, pair_events, all_events, pii_events) | "Events" >> beam.Flatten()
             | "Stats" >> beam.CombineGlobally(StatsFn()))
    hist = (final | "HistItems" >> beam.Filter(lambda r: r["clip_score"] is not None)
            | "HistPairs" >> beam.Map(lambda r: (r["clip_score"], r["drop_reason"] is None))
            | "Hist" >> beam.CombineGlobally(HistFn()))
    k = cfg.sheet_tiles
    sheets = (final
              | "SheetKey" >> beam.Map(lambda r: (r["drop_reason"] or "kept",
                                                  (sample_rank(r["id"]), r["id"], r["image"], _tile_label(r))))
              | "SheetTop" >> beam.combiners.Top.SmallestPerKey(k)
              | "SheetList" >> beam.combiners.ToList())
    figures = (p | "FigSeed" >> beam.Create([None])
               | "Figures" >> beam.Map(lambda _, sh, hi, c: _write_figures(sh, hi, c, pairs_dir, cfg, model_name),
                                       sh=AsSingleton(sheets), hi=AsSingleton(hist), c=AsSingleton(cut)))
    samples = (final | "Dropped" >> beam.Filter(lambda r: r["drop_reason"] is not None)
               | "Samples" >> beam.Map(lambda r: (r["drop_reason"], r["id"], _sample_row(r))))
    final | "WritePairs" >> WriteShards(pairs_dir, "pairs", PAIRS_OUT, provenance=provenance_pairs,
                                        overwrite=overwrite)
    ((stats, figures) | "StatsAndFigs" >> beam.Flatten(), samples) | "PairsReport" >> WriteReport(
        pairs_dir, samples_per_reason=cfg.samples_per_reason, info={"config": cfg.to_json()})

    # report of the interleaved dataset
    inter_events = docs_out | "InterEvents" >> beam.FlatMap(
        lambda t: [("interleaved_images", kept, reason, {"clip_score": s} if s is not None and not math.isnan(s) else {})
                   for kept, reason, s in t[1]] + [("interleaved_docs", t[0]["images_kept"] > 0 or t[0]["images_in"] == 0,
                                                    None if t[0]["images_kept"] > 0 or t[0]["images_in"] == 0
                                                    else "no_image_kept", {})])
    inter_stats = inter_events | "InterStats" >> beam.CombineGlobally(StatsFn())
    no_samples = p | "NoSamples" >> beam.Create([])
    (inter_stats, no_samples) | "InterReport" >> WriteReport(interleaved_dir, info={"config": cfg.to_json()})
    return final, docs


DEMO_CLIP_VERSION = "demo-tiny-clip-v1"


def clip_cache_dir() -> str:
    return os.path.join(os.environ.get("CIDERMILL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                           "cidermill"), "clip")


def default_clip_checkpoint(n: int = 1500, steps: int = 300, seed: int = 0, log=print) -> str:
    """The demo's default CLIP scorer: cidermill-tiny-clip trained by `train_clip` on synthetic captioned
    scenes (`cidermill synth captions`), built on first use and cached (the checkpoint is ~11 MB, so
    it is not shipped in the repository). Falls back to colored-shape pairs if synth is unavailable."""
    import tempfile  # noqa: PLC0415

    from training.clip.train import train_clip  # noqa: PLC0415

    path = os.path.join(clip_cache_dir(), f"{DEMO_CLIP_VERSION}-n{n}-s{steps}-seed{seed}.safetensors")
    if os.path.isfile(path):
        return path
    os.makedirs(clip_cache_dir(), exist_ok=True)
    if log:
        log(f"images: training the default CLIP scorer once ({n} synthetic pairs, {steps} steps); cached at {path}")
    with tempfile.TemporaryDirectory(prefix="cidermill-clip-") as tmp:
        pairs = os.path.join(tmp, "pairs")
        try:
            from pipelines.synth_pipeline import run_synth  # noqa: PLC0415

            run_synth("captions", n, pairs, seed, None, engine="local", workers=1, overwrite=True,
                      progress=False, contact_sheets=False, width=128, height=128)
        except ImportError:
            from training.clip.toy_pairs import write_toy_pairs  # noqa: PLC0415

            write_toy_pairs(pairs, n, seed=seed, overwrite=True)
        train_clip(pairs, path + ".partial.safetensors", steps=steps, seed=seed, log=log)
    os.replace(path + ".partial.safetensors", path)
    if os.path.exists(path + ".partial.safetensors.metrics.json"):
        os.replace(path + ".partial.safetensors.metrics.json", path + ".metrics.json")
    return path


def check_pages_dataset(pages_dir: str) -> None:
    from corpus.reader import ShardDataset  # noqa: PLC0415

    ds = ShardDataset(pages_dir)
    missing = [c for c in PAGE_COLUMNS if c not in ds.schema.names]
    if missing:
        raise CidermillError(f"{pages_dir}: not a pages dataset (kind={ds.kind}; missing columns {missing})")


def run_images(pages_dir: str, out_dir: str, clip_checkpoint: str | None = None, clip_model: str | None = None,
               allow_private: bool = False, beam_args: Iterable[str] | None = None,
               config: ImagesConfig | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Run the whole images stage; writes OUT/pairs and OUT/interleaved (each with report/).

    Returns {"pairs_dir", "interleaved_dir", "pairs": rows, "kept": n, "dropped": {reason: n},
    "documents": n, "clip_cut": x}."""
    from corpus.provenance import make_provenance  # noqa: PLC0415
    from corpus.report import read_report  # noqa: PLC0415
    from pipelines.beam_options import run_pipeline  # noqa: PLC0415
    from filters.clip_score import shared_scorer  # noqa: PLC0415
    from training.clip.model import checkpoint_threshold  # noqa: PLC0415

    cfg = config or ImagesConfig()
    cfg = replace(cfg, fetch=replace(cfg.fetch, allow_private=allow_private or cfg.fetch.allow_private),
                  clip_checkpoint=clip_checkpoint if clip_checkpoint is not None else cfg.clip_checkpoint,
                  clip_model=clip_model if clip_model is not None else cfg.clip_model)
    if cfg.clip_checkpoint is None and cfg.clip_model is None:
        raise CidermillError("no CLIP model: pass --clip-checkpoint PATH (e.g. from `cidermill train-clip`), "
                             "or --clip-model NAME --clip-random-init for a benchmark run")
    check_pages_dataset(pages_dir)
    if cfg.warc_missing not in ("drop", "fetch"):
        raise CidermillError(f"warc_missing must be 'drop' or 'fetch', got {cfg.warc_missing!r}")
    for f in cfg.warc_files or ():
        if not os.path.isfile(f):
            raise CidermillError(f"{f}: WARC file not found")
    # load once here: a bad checkpoint is one clear error before any work starts (the in-process
    # runner's workers then reuse this very model)
    model_name = shared_scorer(cfg.clip_model, cfg.clip_checkpoint, cfg.clip_batch_size, cfg.clip_threads).model_name
    cfg = replace(cfg, clip=resolve_threshold(cfg.clip, checkpoint_threshold(cfg.clip_checkpoint)))
    pairs_dir = os.path.join(out_dir, "pairs")
    inter_dir = os.path.join(out_dir, "interleaved")
    conf = cfg.to_json()
    inputs = [pages_dir] + ([cfg.clip_checkpoint] if cfg.clip_checkpoint else []) + list(cfg.warc_files or ())
    prov_p = make_provenance("pairs", conf, inputs)
    prov_i = make_provenance("interleaved", conf, inputs)
    run_pipeline(lambda p: build_images_pipeline(p, pages_dir, pairs_dir, inter_dir, cfg, prov_p, prov_i,
                                                 overwrite=overwrite, model_name=model_name), beam_args)
    rep = read_report(pairs_dir)
    st: StageStats = rep.stages.get("pairs") or StageStats()
    irep = read_report(inter_dir)
    docs = irep.stages.get("interleaved_docs") or StageStats()
    return {"pairs_dir": pairs_dir, "interleaved_dir": inter_dir, "pairs": st.rows_in, "kept": st.kept,
            "dropped": dict(st.dropped), "documents": docs.rows_in, "clip_cut": rep.info.get("clip_cut"),
            "images": rep.stages["images"].to_json() if "images" in rep.stages else {}}


__all__ = ["ImagesConfig", "run_images", "default_clip_checkpoint", "clip_scores", "image_duplicates", "clip_cut", "build_images_pipeline", "page_refs", "make_pairs", "interleaved_doc",
           "PAIRS_OUT", "INTERLEAVED_OUT"]
