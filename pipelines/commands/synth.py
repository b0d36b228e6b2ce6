"""`cidermill synth charts|tables|captions`: synthetic image-text pairs with QA (PAIRS shards)."""
from __future__ import annotations

import argparse
import os

HELP = "generate synthetic charts, tables or captioned scenes with QA as image-text shards"
DESCRIPTION = ("Generate synthetic image-text pairs: charts (matplotlib, with data table, plotting code and QA), "
               "tables (generated, plus the tables of a crawled PAGES dataset via --pages; markdown, image, QA) "
               "or captioned scenes (keywords / sentence / paragraph / grounded captions with boxes). "
               "Same --seed, same output. Small runs use plain Python; large runs or any Beam flag use Beam.")
BEAM = True


def _csv(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", choices=["charts", "tables", "captions"], help="what to generate")
    p.add_argument("--n", type=int, required=True, help="number of items to generate (tables: generated ones, "
                   "besides those converted from --pages)")
    p.add_argument("--out", required=True, help="output dataset directory")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--width", type=int, default=None, help="image width in pixels (charts 448, captions 224)")
    p.add_argument("--height", type=int, default=None, help="image height in pixels (charts 448, captions 224)")
    p.add_argument("--types", type=_csv, default=None, help="charts: comma-separated chart types "
                   "(grouped_bar,stacked_bar,line,scatter,pie,histogram,area,heatmap)")
    p.add_argument("--vary-size", action="store_true", help="charts: vary each chart's size and aspect around "
                   "--width x --height")
    p.add_argument("--languages", type=_csv, default=None, help="charts/tables: label languages (en,fr,de,es,ja,zh)")
    p.add_argument("--max-items", type=int, default=4, help="captions: most items per scene (default 4)")
    p.add_argument("--max-qa", type=int, default=8, help="most QA pairs per item (default 8)")
    p.add_argument("--pages", default=None, help="tables: PAGES dataset whose extracted tables are converted too")
    p.add_argument("--table-max-rows", type=int, default=30, help="tables: body rows kept (default 30)")
    p.add_argument("--table-on-too-many-rows", choices=["truncate", "drop"], default="truncate",
                   help="tables: truncate longer tables (default) or drop them with reason too_many_rows")
    p.add_argument("--ocr-check", action="store_true", help="OCR every image (tesseract, one thread per process) "
                   "and drop those whose drawn text OCR cannot read back (clipped, overlapping, too small); "
                   "much slower than drawing")
    p.add_argument("--ocr-min-recall", type=float, default=0.55, help="with --ocr-check: share of the drawn "
                   "strings OCR must read for an image to stay (default 0.55, chosen on dev charts)")
    p.add_argument("--engine", choices=["auto", "local", "beam"], default="auto",
                   help="auto: Beam when N > 5000 or Beam flags are given")
    p.add_argument("--workers", type=int, default=None, help="local engine: worker processes (default: all cores, "
                   "at most 8, for 100+ charts; else 1). Output is identical for any worker count")
    p.add_argument("--overwrite", action="store_true", help="replace a different dataset in --out")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpus.report import report_dir
    from pipelines.synth_pipeline import run_synth

    workers = args.workers
    if workers is None:  # matplotlib costs ~0.1 s per chart: spread large chart runs over the cores
        workers = min(os.cpu_count() or 1, 8) if (args.kind == "charts" and args.n >= 100) or (
            args.ocr_check and args.n > 16) else 1
    summary = run_synth(args.kind, args.n, args.out, args.seed, beam_args or None, engine=args.engine,
                        workers=workers, overwrite=args.overwrite, progress=True,
                        width=args.width, height=args.height, chart_types=args.types, vary_size=args.vary_size,
                        languages=args.languages, ocr_check=args.ocr_check, ocr_min_recall=args.ocr_min_recall,
                        max_items=args.max_items, max_qa=args.max_qa, pages=args.pages,
                        table_max_rows=args.table_max_rows, table_on_too_many_rows=args.table_on_too_many_rows)
    dropped = ", ".join(f"{k}={v}" for k, v in sorted(summary["dropped"].items())) or "none"
    print(f"synth {args.kind}: wrote {summary['rows']} rows to {summary['out']} "
          f"(engine {summary['engine']}; dropped: {dropped}); report in {report_dir(summary['out'])}/")
    return 0
