"""`cidermill images`: crawled pages -> image-text pairs and interleaved documents (Beam).

    pages ─ refs (one per <img>) ─ FetchImages (pipelines/images_fetch.py): unique srcs read from a
          │                        --local-images folder or WARC files, or fetched by host (crawl
          │                        rules), Pillow checks ─ AttachImages (ref, info)
          ├─ MakePairs: alt / caption text checks, PII, language ─ ScorePairs: CLIP ─ DedupImages
          │  (best-scoring survivor) ─ ClipCut (global) ─ pairs shards ─ PairsReport
          └─ BuildInterleaved: page text split at image positions, an image stays if
             CLIP(image, its context) passes ─ interleaved shards ─ InterleavedReport

Every step is a module-level composite PTransform over plain functions of imagetext/ (one page,
image or pair at a time) and filters/ (the verdicts). Every pair row is written, kept or dropped
(`drop_reason`), with every score it got; the report adds the CLIP-score histogram and contact
sheets per reason.

Determinism: fetch order per host is sorted, CLIP batches are formed from a hash of the request
key (not arrival order), dedup survivors and the top-p cut are global and order-free. Neither
gathers the pairs on one worker: dedup is keyed work (sha256 groups, pHash band buckets, then
connected components), the top-p cut two mergeable combines (filters/image_dedup.py and
filters/clip_select.py say how).

Plain entry point for other code (the demo): `run_images(pages_dir, out_dir, ...)`.
"""
from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import Any, Callable, Iterable

import apache_beam as beam
import pyarrow as pa
from apache_beam.pvalue import AsSingleton

from corpus import objectstore
from corpus.buckets import bucket_of
from corpus.errors import CidermillError
from corpus.provenance import make_provenance
from corpus.reader import ShardDataset
from corpus.report import StageStats, read_report
from corpus.schemas import INTERLEAVED, PAIRS
from filters.clip_score import shared_scorer
from filters.clip_select import (ClipSelectConfig, base_cut, coarse_bin, cut_from_bin, locate_rank, merge_counts,
                                 resolve_threshold, top_candidate)
from filters.image_dedup import band_entries, bucket_edges, duplicate_label, star_edges
from imagetext.config import ImagesConfig
from imagetext.interleaved import interleaved_doc
from imagetext.pairs import apply_duplicate, dedup_node, finalize_pair, make_pairs
from imagetext.refs import context_text, page_refs
from pipelines.beam_options import run_pipeline
from pipelines.dedup import ConnectedComponents
from pipelines.images_fetch import FetchImages
from pipelines.images_report import InterleavedReport, PairsReport
from pipelines.shards_io import ReadShards, WriteShards
from training.clip.model import checkpoint_threshold

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
DOC_COLUMNS = ("id", "url", "final_url", "text", "language_hint")

# CLIP requests are keyed ("pair", pair id) or ("context", page id, image index).
PAIR, CONTEXT = "pair", "context"


def _first(values: Iterable) -> Any:
    return next(iter(values), None)


class AttachImages(beam.PTransform):
    """(refs, (src, info)) -> (ref, info or None) for every reference (None: no src)."""

    def expand(self, inputs):
        refs, infos = inputs
        return ({"ref": refs | "RefBySrc" >> beam.Map(lambda r: (r["src"], r)), "info": infos}
                | "Join" >> beam.CoGroupByKey()
                | "Attach" >> beam.FlatMap(lambda kv: [(r, _first(kv[1]["info"]) if r["src"] else None)
                                                       for r in kv[1]["ref"]]))


class MakePairs(beam.PTransform):
    """(ref, info) -> pair rows (imagetext.pairs.make_pairs), each with its first drop reason."""

    def __init__(self, cfg: ImagesConfig):
        super().__init__()
        self.cfg = cfg

    def expand(self, joined):
        cfg = self.cfg   # lambdas capture the config, not the transform
        return joined | "Rows" >> beam.FlatMap(lambda ri: make_pairs(ri[0], ri[1], cfg))


# -- CLIP scoring -----------------------------------------------------------------------------
class ClipScoreDoFn(beam.DoFn):
    """(bucket, [(key, image, text)]) -> (key, score); one model per worker, loaded in setup."""

    def __init__(self, cfg: ImagesConfig, key_text: Callable[[Any], str]):
        self.cfg, self.key_text = cfg, key_text

    def file_paths(self) -> list[str]:  # the checkpoint every worker loads (runners/dask_client.py)
        return [self.cfg.clip_checkpoint] if self.cfg.clip_checkpoint else []

    def setup(self):
        self.scorer = shared_scorer(self.cfg.clip_model, self.cfg.clip_checkpoint,
                                    batch_size=self.cfg.clip_batch_size, threads=self.cfg.clip_threads)

    def process(self, element):
        _, reqs = element
        reqs = sorted(reqs, key=lambda r: self.key_text(r[0]))
        bs = self.cfg.clip_batch_size
        for i in range(0, len(reqs), bs):
            chunk = reqs[i:i + bs]
            scores = self.scorer.score([r[1] for r in chunk], [r[2] for r in chunk])
            for (key, _, _), s in zip(chunk, scores):
                yield key, s


def _bucket(text: str, n: int) -> int:
    return bucket_of(text, max(1, n))


class ClipScores(beam.PTransform):
    """(key, image bytes, text) -> (key, cosine). Batches are formed from a hash of `key_text(key)`
    (not arrival order) and sorted by it, so scores are bit-identical whatever the runner or worker
    count."""

    def __init__(self, cfg: ImagesConfig, key_text: Callable[[Any], str] = str):
        super().__init__()
        self.cfg, self.key_text = cfg, key_text

    def expand(self, reqs):
        # a group holds ~clip_group_batches full batches: only one partial batch per group
        group = self.cfg.clip_batch_size * max(1, self.cfg.clip_group_batches)
        key_text = self.key_text
        n_buckets = (reqs | "CountReqs" >> beam.combiners.Count.Globally()
                     | "NBuckets" >> beam.Map(lambda c: max(1, math.ceil(c / group))))
        return (reqs
                | "Bucket" >> beam.Map(lambda r, n: (_bucket(key_text(r[0]), n), r), n=AsSingleton(n_buckets))
                | "GroupBatch" >> beam.GroupByKey()
                | "ClipScore" >> beam.ParDo(ClipScoreDoFn(self.cfg, key_text)))


def request_text(key: tuple) -> str:
    """The text a CLIP request's batch is drawn from: stable, and the same as the stage has always used."""
    return "p:" + key[1] if key[0] == PAIR else f"i:{key[1]}:{key[2]}"


def _pair_request(row: dict[str, Any]) -> list[tuple]:
    return [((PAIR, row["id"]), row["_img"], row["text"])] if row["_img"] is not None and row["text"] else []


def _context_request(ref_info: tuple[dict, dict | None]) -> list[tuple]:
    ref, info = ref_info
    text = context_text(ref)
    if info is None or info.get("image") is None or not text:
        return []
    return [((CONTEXT, ref["page_id"], ref["idx"]), info["image"], text)]


class ScorePairs(beam.PTransform):
    """(pairs, (ref, info)) -> (pairs with clip_score, (page id, (image index, context score))).

    One CLIP pass scores every pair with an image and a text and every image against the text
    around it on its page (for the interleaved documents)."""

    def __init__(self, cfg: ImagesConfig):
        super().__init__()
        self.cfg = cfg

    def expand(self, inputs):
        pairs, joined = inputs
        reqs = ((pairs | "PairReqs" >> beam.FlatMap(_pair_request),
                 joined | "ContextReqs" >> beam.FlatMap(_context_request)) | "AllReqs" >> beam.Flatten())
        scores = reqs | "Clip" >> ClipScores(self.cfg, request_text)
        pair_scores = (scores | "PairScores" >> beam.Filter(lambda kv: kv[0][0] == PAIR)
                       | "ById" >> beam.Map(lambda kv: (kv[0][1], kv[1])))
        context_scores = (scores | "ContextScores" >> beam.Filter(lambda kv: kv[0][0] == CONTEXT)
                          | "ByPage" >> beam.Map(lambda kv: (kv[0][1], (kv[0][2], kv[1]))))
        scored = ({"row": pairs | "PairById" >> beam.Map(lambda r: (r["id"], r)), "score": pair_scores}
                  | "JoinScore" >> beam.CoGroupByKey()
                  | "SetScore" >> beam.FlatMap(lambda kv: [dict(r, clip_score=_first(kv[1]["score"]))
                                                           for r in kv[1]["row"]]))
        return scored, context_scores


# -- dedup and the CLIP cut -------------------------------------------------------------------
class ImageDuplicates(beam.PTransform):
    """(node, sha256, phash) of every dedup candidate (node = filters.image_dedup.node_key)
    -> (pair id, (reason, survivor id)) for each duplicate. Keyed work only: sha256 groups and pHash
    band buckets give edges, pipelines/dedup.py's ConnectedComponents closes them (root = smallest
    node = best (score, id) of the cluster)."""

    def __init__(self, max_distance: int):
        super().__init__()
        self.max_distance = max_distance

    def expand(self, cands):
        d = self.max_distance
        edges = [cands
                 | "BySha" >> beam.Map(lambda c: ((c[0].split("|", 1)[0], c[1]), c[0]))
                 | "GroupSha" >> beam.GroupByKey()
                 | "ShaEdges" >> beam.FlatMap(lambda kv: star_edges(kv[1]))]
        if d >= 0:
            edges.append(cands
                         | "Bands" >> beam.FlatMap(lambda c: band_entries(c[0], c[2], d))
                         | "GroupBand" >> beam.GroupByKey()
                         | "BandEdges" >> beam.FlatMap(lambda kv: bucket_edges(kv[0][1], kv[1], d)))
        return (tuple(edges) | "AllEdges" >> beam.Flatten()
                | "Components" >> ConnectedComponents()
                | "Labels" >> beam.FlatMap(lambda nr: [lab] if (lab := duplicate_label(*nr)) else []))


class DedupImages(beam.PTransform):
    """Scored pairs -> the same pairs, exact and near image duplicates among those still kept marked
    (the survivor of a cluster: the pair whose text matches the image best, ties by id)."""

    def __init__(self, max_distance: int):
        super().__init__()
        self.max_distance = max_distance

    def expand(self, scored):
        dups = (scored
                | "Candidates" >> beam.Filter(lambda r: r["drop_reason"] is None and r["_has_image"])
                | "Nodes" >> beam.Map(dedup_node)
                | "Duplicates" >> ImageDuplicates(self.max_distance))
        return ({"row": scored | "RowById" >> beam.Map(lambda r: (r["id"], r)), "dup": dups}
                | "JoinDup" >> beam.CoGroupByKey()
                | "ApplyDup" >> beam.FlatMap(lambda kv: [apply_duplicate(r, _first(kv[1]["dup"]))
                                                         for r in kv[1]["row"]]))


class _Counts(beam.CombineFn):
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
    """The CLIP scores of the pairs still kept (float or None) -> one float, the cut
    (filters.clip_select.cutoff's value) from two mergeable combines instead of a list of all scores."""

    def __init__(self, clip: ClipSelectConfig):
        super().__init__()
        self.clip = clip

    def expand(self, scores):
        clip = self.clip
        if clip.top_percent is None:   # a fixed threshold: nothing to rank
            return (scores | "Count" >> beam.combiners.Count.Globally()
                    | "FixedCut" >> beam.Map(lambda _: base_cut(clip)))
        cands = scores | "Candidates" >> beam.Filter(top_candidate, clip)
        located = (cands | "CoarseBin" >> beam.Map(coarse_bin)
                   | "CoarseCounts" >> beam.CombineGlobally(_Counts())
                   | "Locate" >> beam.Map(locate_rank, clip))
        fine = (cands
                | "InBin" >> beam.Filter(lambda v, loc: loc is not None and coarse_bin(v) == loc[0],
                                         loc=AsSingleton(located))
                | "FineCounts" >> beam.CombineGlobally(_Counts()))
        return located | "CutValue" >> beam.Map(
            lambda loc, f: base_cut(clip) if loc is None else cut_from_bin(f, loc[1], clip), f=AsSingleton(fine))


# -- interleaved documents --------------------------------------------------------------------
class BuildInterleaved(beam.PTransform):
    """(pages, (ref, info), (page id, (image index, context score))) -> (document row, per-image
    outcomes), one per page (imagetext.interleaved.interleaved_doc)."""

    def __init__(self, cfg: ImagesConfig):
        super().__init__()
        self.cfg = cfg

    def expand(self, inputs):
        pages, joined, context_scores = inputs
        cfg = self.cfg
        return ({"page": pages | "PageById" >> beam.Map(lambda pg: (pg["id"], {k: pg.get(k) for k in DOC_COLUMNS})),
                 "refs": joined | "RefByPage" >> beam.Map(lambda ri: (ri[0]["page_id"], ri)),
                 "scores": context_scores}
                | "JoinDoc" >> beam.CoGroupByKey()
                | "BuildDoc" >> beam.FlatMap(lambda kv: [interleaved_doc(pg, list(kv[1]["refs"]),
                                                                         dict(kv[1]["scores"]), cfg)
                                                         for pg in kv[1]["page"]]))


# -- the stage --------------------------------------------------------------------------------
def build_images_pipeline(p, pages_dir: str, pairs_dir: str, interleaved_dir: str, cfg: ImagesConfig,
                          provenance_pairs: dict, provenance_inter: dict, overwrite: bool = False,
                          model_name: str | None = None):
    pages = p | "ReadPages" >> ReadShards(pages_dir, columns=PAGE_COLUMNS)
    refs = pages | "Refs" >> beam.FlatMap(page_refs)
    infos = refs | "FetchImages" >> FetchImages(cfg)
    joined = (refs, infos) | "AttachImages" >> AttachImages()
    pairs = joined | "MakePairs" >> MakePairs(cfg)
    scored, context_scores = (pairs, joined) | "ScorePairs" >> ScorePairs(cfg)
    deduped = scored | "DedupImages" >> DedupImages(cfg.near_dup_distance)
    cut = (deduped
           | "CutCand" >> beam.Filter(lambda r: r["drop_reason"] is None)
           | "CutScores" >> beam.Map(lambda r: r["clip_score"])
           | "ClipCut" >> ClipCut(cfg.clip))
    final = deduped | "Finalize" >> beam.Map(finalize_pair, cut=AsSingleton(cut))
    final | "WritePairs" >> WriteShards(pairs_dir, "pairs", PAIRS_OUT, provenance=provenance_pairs,
                                        overwrite=overwrite)
    (final, infos, cut) | "PairsReport" >> PairsReport(pairs_dir, cfg, model_name)

    docs_out = (pages, joined, context_scores) | "BuildInterleaved" >> BuildInterleaved(cfg)
    docs = docs_out | "DocRows" >> beam.Map(lambda t: t[0])
    docs | "WriteInterleaved" >> WriteShards(interleaved_dir, "interleaved", INTERLEAVED_OUT,
                                             provenance=provenance_inter, overwrite=overwrite)
    docs_out | "InterleavedReport" >> InterleavedReport(interleaved_dir, cfg)
    return final, docs


def check_pages_dataset(pages_dir: str) -> None:
    ds = ShardDataset(pages_dir)
    missing = [c for c in PAGE_COLUMNS if c not in ds.schema.names]
    if missing:
        raise CidermillError(f"{pages_dir}: not a pages dataset (kind={ds.kind}; missing columns {missing})")


def _resolve_config(cfg: ImagesConfig, clip_checkpoint: str | None, clip_model: str | None,
                    allow_private: bool) -> ImagesConfig:
    """The arguments of run_images folded into the config, which is then checked."""
    cfg = replace(cfg, fetch=replace(cfg.fetch, allow_private=allow_private or cfg.fetch.allow_private),
                  clip_checkpoint=clip_checkpoint if clip_checkpoint is not None else cfg.clip_checkpoint,
                  clip_model=clip_model if clip_model is not None else cfg.clip_model)
    if cfg.clip_checkpoint is None and cfg.clip_model is None:
        raise CidermillError("no CLIP model: pass --clip-checkpoint PATH (e.g. from `cidermill train-clip`), "
                             "or --clip-model NAME --clip-random-init for a benchmark run")
    if cfg.warc_missing not in ("drop", "fetch"):
        raise CidermillError(f"warc_missing must be 'drop' or 'fetch', got {cfg.warc_missing!r}")
    for f in cfg.warc_files or ():
        if not os.path.isfile(f):
            raise CidermillError(f"{f}: WARC file not found")
    for _, folder in cfg.local_images or ():
        if not os.path.isdir(folder):
            raise CidermillError(f"{folder}: --local-images folder not found")
    return cfg


def run_images(pages_dir: str, out_dir: str, clip_checkpoint: str | None = None, clip_model: str | None = None,
               allow_private: bool = False, beam_args: Iterable[str] | None = None,
               config: ImagesConfig | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Run the whole images stage; writes OUT/pairs and OUT/interleaved (each with report/).

    Returns {"pairs_dir", "interleaved_dir", "pairs": rows, "kept": n, "dropped": {reason: n},
    "documents": n, "clip_cut": x}."""
    cfg = _resolve_config(config or ImagesConfig(), clip_checkpoint, clip_model, allow_private)
    check_pages_dataset(pages_dir)
    # load once here: a bad checkpoint is one clear error before any work starts (the in-process
    # runner's workers then reuse this very model)
    model_name = shared_scorer(cfg.clip_model, cfg.clip_checkpoint, cfg.clip_batch_size, cfg.clip_threads).model_name
    cfg = replace(cfg, clip=resolve_threshold(cfg.clip, checkpoint_threshold(cfg.clip_checkpoint)))
    pairs_dir = objectstore.join(out_dir, "pairs")
    inter_dir = objectstore.join(out_dir, "interleaved")
    conf = cfg.to_json()
    inputs = [pages_dir] + ([cfg.clip_checkpoint] if cfg.clip_checkpoint else []) + list(cfg.warc_files or ())
    prov_p = make_provenance("pairs", conf, inputs)
    prov_i = make_provenance("interleaved", conf, inputs)
    run_pipeline(lambda p: build_images_pipeline(p, pages_dir, pairs_dir, inter_dir, cfg, prov_p, prov_i,
                                                 overwrite=overwrite, model_name=model_name), beam_args)
    rep = read_report(pairs_dir)
    st: StageStats = rep.stages.get("pairs") or StageStats()
    docs = read_report(inter_dir).stages.get("interleaved_docs") or StageStats()
    return {"pairs_dir": pairs_dir, "interleaved_dir": inter_dir, "pairs": st.rows_in, "kept": st.kept,
            "dropped": dict(st.dropped), "documents": docs.rows_in, "clip_cut": rep.info.get("clip_cut"),
            "images": rep.stages["images"].to_json() if "images" in rep.stages else {}}
