"""`cidermill text`: pages dataset -> filtered, scrubbed, deduplicated documents dataset + report."""
from __future__ import annotations

HELP = "filter a pages dataset into a documents corpus (langid, heuristics, quality model, PII, safety, decontam, dedup)"
DESCRIPTION = ("Run the text curation pipeline on a pages dataset (from `cidermill crawl`). Stages, order and "
               "thresholds come from --config (defaults: filters/configs/text.yaml). Writes the kept documents "
               "to --out (with out/report/), and every dropped row with all its scores and a drop reason to "
               "OUT.rejected/ (or --rejected DIR; --no-rejected to skip), so thresholds can be re-applied "
               "without re-running.")
BEAM = True
# what its Dask workers import for every task; a local cluster's workers fork from a process that
# imported them once (runners/dask_fork.py)
WORKER_MODULES = ("pipelines.text_pipeline", "fasttext")


def configure(p) -> None:
    p.add_argument("--in", dest="pages", required=True, metavar="PAGES", help="pages dataset directory")
    p.add_argument("--out", required=True, metavar="CORPUS", help="output documents dataset directory")
    p.add_argument("--config", metavar="FILE", help="YAML config merged over the defaults")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--rejected", metavar="DIR", help="where dropped rows go (default from config: OUT.rejected)")
    g.add_argument("--no-rejected", action="store_true", help="do not write dropped rows (report samples only)")
    p.add_argument("--eval-sets", nargs="+", metavar="FILE", help="evaluation sets for decontamination "
                   "(.jsonl or .txt; same as decontam.eval_sets in the config)")
    p.add_argument("--overwrite", action="store_true", help="replace a different dataset already in --out")
    p.add_argument("--workers", type=_workers, default="auto", metavar="N|auto",
                   help="processes of the local engine (the default engine when no Beam option is given): "
                        "scoring and dedup preparation spread over them; same output for any N. auto (default): "
                        "the first work item is timed, then one worker per 2 CPU-s of work left, at most one "
                        "per usable CPU and as many as memory allows; one process below 4 CPU-s")
    p.add_argument("--no-memory-check", action="store_true",
                   help="run the local engine even when its estimated peak memory (about 250 MB + 4x the bytes of "
                        "the input columns it reads + 400 MB per extra worker) exceeds the memory available")


def _workers(value: str):
    """'auto', or a count (range-checked by the job: a one-line error, not argparse's usage text)."""
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        return value


def run(args, beam_args) -> int:
    import json
    import logging
    import sys
    import time

    from pipelines.text_job import run_text

    # other libraries (Beam, Dask) stay at WARNING; the project's own progress lines are at INFO
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", stream=sys.stderr)
    logging.getLogger("pipelines").setLevel(logging.INFO)
    rejected = None if args.no_rejected else (args.rejected or "")
    t0 = time.time()
    overrides = {"decontam": {"eval_sets": list(args.eval_sets)}} if args.eval_sets else None
    s = run_text(args.pages, args.out, args.config, beam_args, rejected_dir=rejected, overwrite=args.overwrite,
                 overrides=overrides, workers=args.workers,
                 memory_check=not args.no_memory_check)
    print(f"text: {s['rows_in']} pages -> {s['kept']} documents in {time.time() - t0:.1f}s", file=sys.stderr)
    for name, f in s["funnel"].items():
        print(f"  {name:<11} in {f['in']:>8}  kept {f['kept']:>8}", file=sys.stderr)
    print(f"text: report {s['report']}", file=sys.stderr)
    print(json.dumps({"out": s["out_dir"], "rejected": s["rejected_dir"], "kept": s["kept"],
                      "rows_in": s["rows_in"], "dropped": s["dropped"]}))
    return 0
