"""`cidermill demo`: the whole flow on the embedded demo site, on this machine, in minutes.

Starts the demo site on 127.0.0.1, then runs each stage through the same CLI verbs a user runs:
crawl -> text curation -> synthetic data -> CLIP training -> image-text pairs -> tokenizer ->
token shards -> training (with a resume). Every dataset is verified and its report rendered;
the last screen says where everything is.
"""
from __future__ import annotations

import os
import shutil
import time

HELP = "run every stage on the embedded demo site and print where the outputs are"
BEAM = True
DEFAULT_PORT = 8642
MARKER = ".cidermill-demo"  # written into --out by every demo run; --fresh deletes only a folder holding it


def configure(p):
    p.add_argument("--out", default="out/demo", help="output directory (default out/demo)")
    p.add_argument("--fresh", action="store_true",
                   help="delete a previous demo output first (only a folder a demo run created: it holds "
                        f"{MARKER}; anything else is refused)")
    p.add_argument("--skip", default="", help="comma-separated stages to skip (crawl,text,synth,clip,images,train,recipe,generate,posttrain,vision)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port of the demo site on 127.0.0.1 (default {DEFAULT_PORT}). Page ids hash the URL, port "
                        "included, so a fixed port makes two demo runs give the same ids and outputs; 0 picks a "
                        "free port")


class Demo:
    def __init__(self, out: str, beam_args: list[str], skip: set[str]):
        self.out, self.beam_args, self.skip = out, beam_args, skip
        self.results: list[tuple[str, str, str]] = []  # (stage, status, detail)
        self.datasets: list[str] = []

    def verb(self, *argv: str, beam: bool = False) -> None:
        from corpus.errors import CidermillError
        from pipelines.cli import main

        args = list(argv) + (self.beam_args if beam else [])
        rc = main(args)
        if rc != 0:
            raise CidermillError(f"demo stage `cidermill {' '.join(argv[:1])}` failed (exit {rc})")

    def stage(self, name: str, fn) -> None:
        from pipelines.cli import VERBS  # noqa: F401
        if name in self.skip:
            self.results.append((name, "skipped", "--skip"))
            return
        print(f"\n== demo: {name} ==", flush=True)
        t = time.time()
        detail = fn() or ""
        self.results.append((name, f"done in {time.time() - t:.0f}s", detail))

    def add_dataset(self, path: str) -> None:
        from corpus.report import STATS_NAME, report_dir
        from corpus.verify import verify_dataset
        from corpus.errors import CidermillError
        from pipelines.report_page import render_report

        problems = verify_dataset(path)
        if problems:
            raise CidermillError(f"demo output {path} failed verification: {problems[0]}")
        if os.path.exists(os.path.join(report_dir(path), STATS_NAME)):
            render_report(path)
        self.datasets.append(path)


def _has(verb: str) -> bool:
    import importlib
    from pipelines.cli import VERBS
    try:
        importlib.import_module(VERBS[verb])
        return True
    except ModuleNotFoundError:
        return False


def remove_demo_output(out: str) -> None:
    """Delete `out` only when a demo run created it (its marker file is there); refuse anything else."""
    from corpus.errors import ConfigError

    if not os.path.lexists(out):
        return
    if os.path.islink(out) or not os.path.isdir(out):
        raise ConfigError(f"--fresh: {out} is not a demo output folder (a link or a file); not deleting it")
    if not os.path.isfile(os.path.join(out, MARKER)):
        raise ConfigError(f"--fresh: {out} holds no {MARKER} marker, so no demo run created it; not deleting it "
                          "(remove it yourself or pick another --out)")
    shutil.rmtree(out)


def run(args, beam_args) -> int:
    from corpus.manifest import read_manifest
    from pipelines.demo_stages import STAGES

    from corpus.errors import ConfigError

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, got {args.port}")
    out = os.path.abspath(args.out)
    if args.fresh:
        remove_demo_output(out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, MARKER), "w", encoding="utf-8") as f:
        f.write("written by `cidermill demo`; `cidermill demo --fresh` may delete this folder\n")
    demo = Demo(out, list(beam_args), {s.strip() for s in args.skip.split(",") if s.strip()})
    t0 = time.time()
    from pipelines.demo_site.server import DemoSite
    site = DemoSite(port=args.port, log_path=os.path.join(out, "demo-site-access.jsonl"), slow_seconds=8)
    try:
        site.start()
    except OSError as e:
        raise ConfigError(f"cannot serve the demo site on 127.0.0.1:{args.port} ({e.strerror}); "
                          "pass --port with a free port (or 0 for any)") from None
    with site:
        print(f"demo site: {site.url}  (access log {out}/demo-site-access.jsonl)")
        for name, verb, fn in STAGES:
            if verb and not _has(verb):
                demo.results.append((name, "not available", f"verb `{verb}` not built"))
                continue
            demo.stage(name, lambda fn=fn: fn(demo, site.url))
    print("\n" + "=" * 72)
    print(f"cidermill demo finished in {time.time() - t0:.0f}s — outputs under {out}")
    for name, status, detail in demo.results:
        print(f"  {name:<10} {status:<16} {detail}")
    print("datasets (all verified):")
    for d in demo.datasets:
        m = read_manifest(d)
        rep = os.path.join(d, "_report", "index.html")
        print(f"  {os.path.relpath(d, out):<28} {m.kind:<12} {m.rows:>7} rows"
              + (f"   report: {rep}" if os.path.exists(rep) else ""))
    print("next: `cidermill shards head DIR`, open a report's index.html in a browser")
    return 0
