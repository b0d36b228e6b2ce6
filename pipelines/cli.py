"""The `cidermill` command: one console script, one verb per module in pipelines/commands/.

Each verb module defines `HELP`, `BEAM` (whether unknown --flags pass through to Beam),
`configure(parser)` and `run(args, beam_args) -> int`. Verb modules keep heavy imports (torch,
Beam, Playwright) inside `run`, so `cidermill --help` stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback

# verb -> module. Order is the order shown in --help.
VERBS: dict[str, str] = {
    "demo": "pipelines.commands.demo",
    "serve-demo-site": "pipelines.commands.serve_demo_site",
    "crawl": "pipelines.commands.crawl",
    "text": "pipelines.commands.text",
    "images": "pipelines.commands.images",
    "synth": "pipelines.commands.synth",
    "report": "pipelines.commands.report",
    "shards": "pipelines.commands.shards",
    "train-quality": "pipelines.commands.train_quality",
    "train-clip": "pipelines.commands.train_clip",
    "train-extractor": "pipelines.commands.train_extractor",
    "tokenizer": "pipelines.commands.tokenizer",
    "tokenize": "pipelines.commands.tokenize",
    "train": "pipelines.commands.train",
    "upcycle": "pipelines.commands.upcycle",
    "model": "pipelines.commands.model",
    "compress": "pipelines.commands.compress",
    "generate": "pipelines.commands.generate",
    "sft": "pipelines.commands.sft",
    "rl": "pipelines.commands.rl",
    "eval": "pipelines.commands.eval",
}


def _load_verbs() -> dict[str, object]:
    mods = {}
    for verb, modname in VERBS.items():
        mods[verb] = importlib.import_module(modname)
    return mods


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = argparse.ArgumentParser(
        prog="cidermill",
        description="Build pretraining corpora (crawl, filter, dedup, image-text, synthetic) as sharded "
                    "Arrow datasets with audit reports, and train models on them.")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    mods = _load_verbs()
    for verb, mod in mods.items():
        p = sub.add_parser(verb, help=getattr(mod, "HELP", ""), description=getattr(mod, "DESCRIPTION", None)
                           or getattr(mod, "HELP", ""))
        if getattr(mod, "BEAM", False):
            p.epilog = ("Unknown --flags are passed to Apache Beam as pipeline options, e.g. --runner, "
                        "--direct_num_workers=2 --direct_running_mode=multi_processing, or Dataflow/Flink/Spark "
                        "options. Default runner: the in-process FnApiRunner (no Prism download). On Dask: "
                        "--runner dask --dask_client_address HOST:PORT (a running scheduler) or --dask_workers N "
                        "(a local cluster). Dataset paths may be s3://bucket/prefix.")
        mod.configure(p)  # type: ignore[attr-defined]
        p.set_defaults(_module=mod)
    return parser, mods


def main(argv: list[str] | None = None) -> int:
    from corpus.errors import CidermillError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser, _ = build_parser()
    args, unknown = parser.parse_known_args(argv)
    mod = getattr(args, "_module", None)
    if mod is None:
        parser.print_help()
        return 2
    if unknown and not getattr(mod, "BEAM", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    debug = args.debug or bool(os.environ.get("CIDERMILL_DEBUG"))
    from pipelines.malloc_arenas import limit_malloc_arenas

    limit_malloc_arenas()
    local_dask = _start_local_dask(unknown, getattr(mod, "WORKER_MODULES", ())) if getattr(mod, "BEAM", False) else False
    forked = _fork_sdk_workers(unknown, getattr(mod, "WORKER_MODULES", ())) if getattr(mod, "BEAM", False) else False
    rc = 70
    try:
        rc = int(mod.run(args, unknown) or 0)  # type: ignore[attr-defined]
        return rc
    except CidermillError as e:
        if debug:
            traceback.print_exc()
        print(f"cidermill {args.verb}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"cidermill {args.verb}: interrupted", file=sys.stderr)
        return 130
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as e:
        if debug:
            traceback.print_exc()
        print(f"cidermill {args.verb}: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001  (a bug: say so in one line, traceback on demand)
        if debug:
            traceback.print_exc()
        print(f"cidermill {args.verb}: internal error: {type(e).__name__}: {e} "
              "(rerun with --debug for the traceback)", file=sys.stderr)
        return 70
    finally:
        _end_job_outputs(failed=rc != 0)
        if local_dask:  # the command's local cluster ends with it (main() may be called again in-process)
            from pipelines.runners.dask_client import close_local_clusters
            close_local_clusters()
        if forked:
            from pipelines.runners.forked_sdk import uninstall
            uninstall()


def _end_job_outputs(failed: bool) -> None:
    """A Beam job's writers stage their rows in OUT/.staging and write shards before the manifest;
    when the command fails, what it left in the outputs it did not finish goes with it (staged
    rows, shards a reader could take for a dataset, the report), not at the next run."""
    import logging

    from corpus.writer import end_job_outputs
    gone = end_job_outputs(failed)
    if gone:
        logging.getLogger("cidermill").info("removed what the failed job left: %s", ", ".join(gone))


def _start_local_dask(beam_args: list[str], modules=()) -> bool:
    """With `--runner dask` and no scheduler address, start the local cluster now, in a thread:
    its workers start and import while this process imports Beam and builds the job (about a
    second sooner on a one-worker job); they fork from a process that imported the command's
    WORKER_MODULES once (runners/dask_fork.py). -> whether one was started."""
    from pipelines.beam_options import local_dask_workers

    n = local_dask_workers(beam_args) if beam_args else None
    if not n:
        return False
    from pipelines.runners.dask_client import start_local_early
    return start_local_early(n, modules)


def _fork_sdk_workers(beam_args: list[str], modules=()) -> bool:
    """With `--direct_running_mode=multi_processing`, Beam's SDK workers fork from a process that
    imported Beam and the command's WORKER_MODULES once, instead of each importing them
    (runners/forked_sdk.py); CIDERMILL_FORKED_WORKERS=0 keeps Beam's own start. -> whether done."""
    if os.environ.get("CIDERMILL_FORKED_WORKERS", "1") == "0":
        return False
    from pipelines.runners.forked_sdk import install, wants_forked_workers
    return wants_forked_workers(beam_args) and install(modules)


if __name__ == "__main__":
    sys.exit(main())
