"""`cidermill synth charts|tables|captions|math|code`: synthetic image-text pairs with QA (PAIRS shards),
or verified math and code (VERIFIED shards; pipelines/verified_synth_pipeline.py)."""
from __future__ import annotations

import argparse

HELP = "generate synthetic charts, tables, captioned scenes, or verified math and code"
DESCRIPTION = ("Generate synthetic image-text pairs: charts (matplotlib, with data table, plotting code and QA), "
               "tables (generated, plus the tables of a crawled PAGES dataset via --pages; markdown, image, QA) "
               "or captioned scenes (keywords / sentence / paragraph / grounded captions with boxes). "
               "Same --seed, same output. Small runs use plain Python; large runs or any Beam flag use Beam. "
               "math and code write verified text items (VERIFIED shards, always through Beam): math problems whose "
               "every step is re-derived and whose answer an independent route (sympy, exact fractions, enumeration) "
               "confirms; Python functions whose tests pass in a sandbox and catch a known buggy variant.")
EPILOG = """examples:
  cidermill synth charts --n 200 --out out/synth/charts
  cidermill synth math --n 1000 --out out/synth/math --process-out out/synth/math_process --languages en,fr
  cidermill synth code --n 500 --out out/synth/code --eval-sets evals/humaneval.jsonl --direct_num_workers=2
"""
BEAM = True
WORKER_MODULES = ("pipelines.synth_pipeline",)  # imported once for every local Dask worker (runners/dask_fork.py)


def _csv(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def configure(p: argparse.ArgumentParser) -> None:
    import textwrap
    p.epilog = "\n".join(textwrap.wrap(p.epilog or "", 100)) + "\n\n" + EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("kind", choices=["charts", "tables", "captions", "math", "code"], help="what to generate")
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
    p.add_argument("--languages", type=_csv, default=None, help="charts/tables: label languages (en,fr,de,es,ja,zh); "
                   "math: problem languages (en,fr,de,es)")
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
    v = p.add_argument_group("math and code")
    v.add_argument("--families", type=_csv, default=None, help="math: tables,linear,quadratic,system,units,probability; "
                   "code: task names or string,list,number,dict (default all)")
    v.add_argument("--process-out", default=None, help="math: also write the process-supervision split (each "
                   "solution clean and with one corrupted step, every step labelled) to this dataset")
    v.add_argument("--eval-sets", nargs="+", metavar="FILE", default=[], help="evaluation sets (.jsonl string fields "
                   "or .txt lines); an item sharing an n-gram with one is dropped")
    v.add_argument("--decontam-ngram", type=int, default=13, help="n-gram length for --eval-sets (default 13)")
    v.add_argument("--heldout-n", type=int, default=1000, help="held-out items (reserved seed) an item may not "
                   "equal (default 1000; 0 turns the check off)")
    v.add_argument("--math-time-limit", type=float, default=5.0, help="math: seconds per independent check; "
                   "an item whose check runs longer is dropped (default 5)")
    v.add_argument("--sandbox-wall-s", type=float, default=4.0, help="code: wall-clock limit per run (default 4)")
    v.add_argument("--sandbox-cpu-s", type=int, default=2, help="code: CPU-second limit per run (default 2)")
    v.add_argument("--sandbox-memory-mb", type=int, default=256, help="code: address-space limit (default 256)")
    v.add_argument("--buggy-share", type=float, default=0.2, help="code: share of candidates drawn from the buggy "
                   "variants, which the tests must catch (default 0.2)")


def run_verified_kind(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpus.errors import ConfigError
    from corpus.report import report_dir
    from pipelines.verified_synth_pipeline import run_verified

    image_only = [f for f, on in (("--width", args.width), ("--height", args.height), ("--types", args.types),
                                  ("--vary-size", args.vary_size), ("--pages", args.pages),
                                  ("--ocr-check", args.ocr_check)) if on]
    if image_only:
        raise ConfigError(f"{', '.join(image_only)} do not apply to `synth {args.kind}`")
    extra = {"process_out": args.process_out} if args.kind == "math" else {}
    summary = run_verified(args.kind, args.n, args.out, args.seed, beam_args or None, overwrite=args.overwrite,
                           languages=args.languages, families=args.families, eval_sets=list(args.eval_sets),
                           decontam_ngram=args.decontam_ngram, heldout_n=args.heldout_n,
                           math_time_limit_s=args.math_time_limit, sandbox_wall_s=args.sandbox_wall_s,
                           sandbox_cpu_s=args.sandbox_cpu_s, sandbox_memory_mb=args.sandbox_memory_mb,
                           buggy_share=args.buggy_share, **extra)
    dropped = ", ".join(f"{k}={v}" for k, v in sorted(summary["dropped"].items())) or "none"
    process = f"; process split: {summary['process_rows']} rows in {args.process_out}" if args.process_out else ""
    print(f"synth {args.kind}: {summary['generated']} generated, {summary['rows']} verified and written to "
          f"{summary['out']} (dropped: {dropped}){process}; report in {report_dir(summary['out'])}/")
    return 0


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpus.cpus import usable_cpus
    from corpus.report import report_dir
    from pipelines.synth_pipeline import run_synth

    if args.kind in ("math", "code"):
        return run_verified_kind(args, beam_args)
    workers = args.workers
    if workers is None:  # matplotlib costs ~0.1 s per chart: spread large chart runs over the cores
        workers = min(usable_cpus(), 8) if (args.kind == "charts" and args.n >= 100) or (
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
