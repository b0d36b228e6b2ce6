"""`cidermill synth`: generate charts, tables or captioned scenes as a PAIRS dataset with a report.

Two engines give byte-identical datasets: `local` (plain Python, optional process pool) for small
runs and the demo, `beam` (any Beam runner) for large N. Item i depends only on (seed, kind, i);
rows go to shard hash(id) % n_shards sorted by id, exactly as pipelines.shards_io.WriteShards does.
"""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

import pyarrow as pa

from corpus.buckets import bucket_of
from corpus.errors import ConfigError
from corpus.manifest import manifest_path
from corpus.provenance import make_provenance
from corpus import objectstore
from corpus.report import Histogram, ReportStats, Samples, read_report, report_dir, write_report
from corpus.schemas import PAIRS
from corpus.writer import DEFAULT_TARGET_BYTES, finalize_dataset, prepare_output_dir, write_shard_file

KINDS = ("charts", "tables", "captions")
STAGE = {"charts": "synth_charts", "tables": "synth_tables", "captions": "synth_captions"}
BEAM_ABOVE = 5000          # engine="auto": Beam for larger runs
CHUNK = 16                 # items per Beam work unit
SHEET_ROWS = 12            # items on a report contact sheet
WEB_COLUMNS = ["id", "url", "title", "language_hint", "tables"]
HTML_COLUMNS = ["rendered_html_zstd", "raw_html_zstd"]  # read only when a dataset has no `tables` column


def page_columns(schema_names: Sequence[str]) -> list[str]:
    cols = [c for c in WEB_COLUMNS if c in schema_names]
    if "tables" not in schema_names:
        cols += [c for c in HTML_COLUMNS if c in schema_names]
    return cols


def page_tables(page: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's extracted tables, or tables parsed from its HTML when none were extracted."""
    if page.get("tables") is not None:
        return list(page["tables"])
    from corpus.schemas import decompress_html
    from synth.html_tables import parse_html_tables
    blob = page.get("rendered_html_zstd") or page.get("raw_html_zstd")
    html = decompress_html(blob) if blob else None
    return parse_html_tables(html) if html else []


@dataclass
class SynthConfig:
    kind: str
    n: int
    seed: int = 0
    width: int | None = None         # default 448 for charts, 224 for scenes
    height: int | None = None
    chart_types: list[str] | None = None
    vary_size: bool = False          # charts: sizes drawn around width x height
    languages: list[str] | None = None
    max_items: int = 4               # scenes
    max_qa: int = 8
    pages: str | None = None         # tables: PAGES dataset whose `tables` column is converted too
    table_max_rows: int = 30
    table_on_too_many_rows: str = "truncate"
    ocr_check: bool = False          # OCR every image; drop those whose drawn text cannot be read
    ocr_min_recall: float = 0.55     # share of drawn strings OCR must read back (bench/ocr_threshold.py)

    def validate(self) -> "SynthConfig":
        from synth.captions import check_scene_params
        from synth.charts import check_chart_params
        if self.kind not in KINDS:
            raise ConfigError(f"unknown synth kind {self.kind!r}; choose from {', '.join(KINDS)}")
        if not isinstance(self.n, int) or self.n < 0:
            raise ConfigError(f"--n must be a non-negative integer, got {self.n!r}")
        if self.n > 100_000_000:
            raise ConfigError(f"--n {self.n} is beyond what one run should generate (max 100,000,000)")
        if self.kind == "charts":
            self.width, self.height = self.width or 448, self.height or 448
            check_chart_params(self.width, self.height, self.chart_types, self.languages)
        elif self.kind == "captions":
            self.width, self.height = self.width or 224, self.height or 224
            check_scene_params(self.width, self.height, self.max_items)
        else:
            check_chart_params(448, 448, None, self.languages)
            if self.table_max_rows < 1:
                raise ConfigError(f"--table-max-rows must be at least 1, got {self.table_max_rows}")
            if self.table_on_too_many_rows not in ("truncate", "drop"):
                raise ConfigError("--table-on-too-many-rows must be truncate or drop")
        if self.pages and self.kind != "tables":
            raise ConfigError("--pages only applies to `synth tables`")
        if self.pages and not (objectstore.exists if objectstore.is_remote(self.pages) else os.path.exists)(
                manifest_path(self.pages)):
            raise ConfigError(f"{self.pages}: not a dataset (no {os.path.basename(manifest_path(self.pages))})")
        if not 0.0 <= self.ocr_min_recall <= 1.0:
            raise ConfigError(f"--ocr-min-recall must be between 0 and 1, got {self.ocr_min_recall}")
        if self.ocr_check:
            from filters.ocr import available
            if not available():
                raise ConfigError("--ocr-check needs tesseract (Debian tesseract-ocr; run `make system-deps`)")
        if not 1 <= self.max_qa <= 50:
            raise ConfigError(f"--max-qa must be between 1 and 50, got {self.max_qa}")
        return self

    def limits(self):
        from synth.tables_core import TableLimits
        return TableLimits(max_rows=self.table_max_rows, on_too_many_rows=self.table_on_too_many_rows)


# --- item generation (shared by both engines) -------------------------------------------------

def generate_item(cfg: SynthConfig, index: int) -> dict[str, Any]:
    if cfg.kind == "charts":
        from synth.charts import make_chart
        return make_chart(cfg.seed, index, cfg.width, cfg.height, cfg.chart_types, cfg.languages, cfg.max_qa,
                          cfg.vary_size)
    if cfg.kind == "captions":
        from synth.captions import make_captioned_scene
        return make_captioned_scene(cfg.seed, index, cfg.width, cfg.height, cfg.max_items)
    from synth.tables import make_generated_table
    return make_generated_table(cfg.seed, index, cfg.languages, cfg.limits())


def web_table_items(cfg: SynthConfig, page: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    """('row', row) or ('drop', (reason, key, sample)) for every table of one crawled page."""
    from synth.tables import make_web_table, web_table_id
    for k, t in enumerate(page_tables(page)):
        try:
            row, reason, notes = make_web_table(cfg.seed, page, k, t, cfg.limits())
        except Exception as e:  # noqa: BLE001  (one bad table must not stop the run)
            row, reason, notes = None, f"render_error:{type(e).__name__}", {}
        if row is not None:
            yield "row", row
        else:
            rows = t.get("rows") or []
            yield "drop", (reason, web_table_id(page.get("id") or "", k),
                           {"page_url": page.get("url"), "table_index": k, "n_rows": len(rows),
                            "preview": [r[:6] for r in rows[:4]], **notes})


def row_stats(kind: str, rows: Sequence[dict[str, Any]], drops: Sequence[tuple[str, str, dict]] = ()) -> ReportStats:
    import json
    st = ReportStats()
    stage = st.stage(STAGE[kind])
    for r in rows:
        meta = json.loads(r["meta_json"])
        stage.record(True, scores={"qa_per_item": len(r["qa"]), "image_kb": len(r["image"]) / 1024},
                     ranges={"qa_per_item": (0, 20), "image_kb": (0, 200)})
        stage.counters[f"language:{r['language']}"] += 1
        for q in r["qa"]:
            stage.counters[f"qa_type:{q['type']}"] += 1
        if "ocr" in meta:
            stage.histograms.setdefault("ocr_text_recall", Histogram(0.0, 1.0)).add(meta["ocr"]["ocr_text_recall"])
        if kind == "charts":
            stage.counters[f"chart_type:{meta['chart_type']}"] += 1
        elif kind == "captions":
            for it in meta["scene"]["items"]:
                stage.counters[f"item:{it['kind']}"] += 1
        else:
            stage.counters[f"table_source:{meta['source']}"] += 1
            for note in meta.get("normalisation", {}):
                stage.counters[f"normalised:{note}"] += 1
    for reason, _, sample in drops:
        recall = sample.get("ocr_text_recall")
        stage.record(False, reason, scores=None if recall is None else {"ocr_text_recall": recall})
    return st


# --- deterministic shard layout (same as WriteShards) -----------------------------------------

def write_rows_deterministic(out_dir: str, rows: list[dict[str, Any]], provenance: dict, target_bytes: int,
                             overwrite: bool) -> None:
    from pipelines.shards_io import approx_size
    prepare_output_dir(out_dir, "pairs", job=provenance.get("job"), overwrite=overwrite)
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ConfigError("duplicate row ids in synthetic output (a page listed twice in --pages?)")
    total = sum(approx_size(r) for r in rows)
    n = max(1, math.ceil(total / max(1, target_bytes)))
    buckets: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        buckets.setdefault(bucket_of(r["id"], n), []).append(r)
    infos = [write_shard_file(out_dir, i, pa.Table.from_pylist(sorted(b, key=lambda r: r["id"]), schema=PAIRS))
             for i, b in sorted(buckets.items())]
    finalize_dataset(out_dir, "pairs", PAIRS, infos, provenance)


def _gen_range(args: tuple[SynthConfig, int, int]) -> list[dict[str, Any]]:
    cfg, lo, hi = args
    return [generate_item(cfg, i) for i in range(lo, hi)]


def _gen_checked(args: tuple[SynthConfig, int, int]) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict]]]:
    """Generated rows, OCR-checked when cfg.ocr_check: (kept rows, drops)."""
    rows = _gen_range(args)
    if not args[0].ocr_check:
        return rows, []
    from pipelines.synth_ocr import check_rows
    return check_rows(rows, args[0].ocr_min_recall)


def _local(cfg: SynthConfig, out_dir: str, provenance: dict, workers: int, target_bytes: int, overwrite: bool,
           progress: bool) -> tuple[ReportStats, Samples]:
    from tqdm import tqdm
    rows: list[dict[str, Any]] = []
    drops: list[tuple[str, str, dict]] = []
    chunks = [(cfg, lo, min(cfg.n, lo + CHUNK)) for lo in range(0, cfg.n, CHUNK)]
    bar = tqdm(total=cfg.n, desc=f"synth {cfg.kind}", unit="item", disable=not progress, leave=False)
    if workers > 1 and len(chunks) > 1:
        import multiprocessing as mp
        with mp.get_context("forkserver" if os.name == "posix" else "spawn").Pool(workers) as pool:
            for part, dropped in pool.imap(_gen_checked, chunks):
                rows += part
                drops += dropped
                bar.update(len(part) + len(dropped))
    else:
        for c in chunks:
            part, dropped = _gen_checked(c)
            rows += part
            drops += dropped
            bar.update(len(part) + len(dropped))
    bar.close()
    if cfg.pages:
        from corpus.reader import ShardDataset
        ds = ShardDataset(cfg.pages)
        for page in ds.iter_rows(columns=page_columns(ds.schema.names)):
            for tag, val in web_table_items(cfg, page):
                (rows.append if tag == "row" else drops.append)(val)
    write_rows_deterministic(out_dir, rows, provenance, target_bytes, overwrite)
    samples = Samples()
    for reason, key, sample in drops:
        samples.add(reason, key, sample)
    return row_stats(cfg.kind, rows, drops), samples


def _beam(cfg: SynthConfig, out_dir: str, provenance: dict, beam_args: Sequence[str] | None, target_bytes: int,
          overwrite: bool) -> None:
    import apache_beam as beam

    from pipelines.beam_options import beam_job
    from pipelines.report_io import WriteReport
    from pipelines.shards_io import ReadShards, WriteShards

    kind = cfg.kind

    def gen(chunk):
        rows, drops = _gen_checked((cfg, chunk[0], chunk[1]))
        for r in rows:
            yield r
        for d in drops:
            yield beam.pvalue.TaggedOutput("drops", d)
        yield beam.pvalue.TaggedOutput("stats", row_stats(kind, rows, drops))

    with beam_job(beam_args) as p:
        chunks = [(lo, min(cfg.n, lo + CHUNK)) for lo in range(0, cfg.n, CHUNK)]
        gen_out = (p | "Chunks" >> beam.Create(chunks) | "Spread" >> beam.Reshuffle()
                   | "Generate" >> beam.FlatMap(gen).with_outputs("stats", "drops", main="rows"))
        rows, stats = [gen_out.rows], [gen_out.stats]
        samples = gen_out.drops
        if cfg.pages:
            def web(page):
                got_rows, drops = [], []
                for tag, val in web_table_items(cfg, page):
                    (got_rows if tag == "row" else drops).append(val)
                    if tag == "row":
                        yield val
                    else:
                        yield beam.pvalue.TaggedOutput("drops", val)
                yield beam.pvalue.TaggedOutput("stats", row_stats(kind, got_rows, drops))
            from corpus.reader import ShardDataset
            cols = page_columns(ShardDataset(cfg.pages).schema.names)
            web_out = (p | "ReadPages" >> ReadShards(cfg.pages, columns=cols)
                       | "WebTables" >> beam.FlatMap(web).with_outputs("stats", "drops", main="rows"))
            rows.append(web_out.rows)
            stats.append(web_out.stats)
            samples = (samples, web_out.drops) | "AllDrops" >> beam.Flatten()
        all_rows = rows[0] if len(rows) == 1 else tuple(rows) | "AllRows" >> beam.Flatten()
        all_stats = stats[0] if len(stats) == 1 else tuple(stats) | "AllStats" >> beam.Flatten()
        _ = all_rows | "Write" >> WriteShards(out_dir, "pairs", PAIRS, target_bytes=target_bytes,
                                              provenance=provenance, overwrite=overwrite)
        _ = (all_stats, samples) | "Report" >> WriteReport(out_dir)


def add_contact_sheets(out_dir: str, kind: str, stats: ReportStats, k: int = SHEET_ROWS) -> ReportStats:
    """Draw the first k rows (by id) as a contact sheet under the report's plots/ and register it."""
    from corpus.reader import ShardDataset
    from synth.contact_sheet import contact_sheet
    ds = ShardDataset(out_dir)
    if len(ds) == 0:
        return stats
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    order = sorted(range(len(ids)), key=lambda i: ids[i])[:k]
    rows = ds.take(order).to_pylist()
    rel = f"plots/contact_sheet_{kind}.png"
    if objectstore.is_remote(out_dir):
        import io
        buf = io.BytesIO()
        contact_sheet(rows).save(buf, format="PNG")
        objectstore.write_bytes(f"{report_dir(out_dir)}/{rel}", buf.getvalue())
    else:
        os.makedirs(os.path.join(report_dir(out_dir), "plots"), exist_ok=True)
        contact_sheet(rows).save(os.path.join(report_dir(out_dir), rel), format="PNG")
    stats.add_figure(rel, f"Synthetic {kind}: first {len(rows)} items",
                     "Each image with its one-sentence caption and its first QA pairs (answer and type).")
    return stats


def run_synth(kind: str, n: int, out_dir: str, seed: int = 0, beam_args: Sequence[str] | None = None, *,
              engine: str = "auto", workers: int = 1, overwrite: bool = False, progress: bool = False,
              target_bytes: int = DEFAULT_TARGET_BYTES, contact_sheets: bool = True, **options) -> dict[str, Any]:
    """Generate `n` synthetic items of `kind` into the PAIRS dataset `out_dir`; returns a summary.

    options: width, height, chart_types, vary_size, languages, max_items, max_qa, pages, table_max_rows,
    table_on_too_many_rows (see SynthConfig). engine: auto | local | beam.
    """
    unknown = set(options) - set(SynthConfig.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"unknown synth option(s): {', '.join(sorted(unknown))}")
    cfg = SynthConfig(kind=kind, n=n, seed=int(seed), **options).validate()
    if engine not in ("auto", "local", "beam"):
        raise ConfigError(f"unknown engine {engine!r} (auto, local or beam)")
    if engine == "auto":
        engine = "beam" if (beam_args or cfg.n > BEAM_ABOVE) else "local"
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    config = {k: v for k, v in asdict(cfg).items() if k != "extra"}
    provenance = make_provenance("pairs", config=config, inputs=[cfg.pages] if cfg.pages else [])
    if engine == "local":
        stats, samples = _local(cfg, out_dir, provenance, workers, target_bytes, overwrite, progress)
    else:
        _beam(cfg, out_dir, provenance, beam_args, target_bytes, overwrite)
        stats, samples = read_report(out_dir), None
    stats.info.update({"synth_kind": kind, "seed": cfg.seed, "engine": engine, "n": cfg.n})
    if cfg.ocr_check:
        stats.info.update({"ocr_check": "tesseract", "ocr_min_recall": cfg.ocr_min_recall})
    if contact_sheets:
        stats = add_contact_sheets(out_dir, kind, stats)
    write_report(out_dir, stats, samples)
    st = stats.stages.get(STAGE[kind])
    return {"out": out_dir, "kind": kind, "rows": st.kept if st else 0,
            "dropped": dict(st.dropped) if st else {}, "engine": engine}
