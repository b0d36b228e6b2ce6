"""`cidermill report DIR`: render the dataset's audit report as one static HTML page."""
from __future__ import annotations

import os

HELP = "render DIR/_report/index.html (funnel, drop reasons, histograms, samples) from DIR/_report/stats.json"
BEAM = False


def configure(p):
    p.add_argument("dir", help="a dataset directory written by a cidermill pipeline")


def run(args, beam_args) -> int:
    from corpus.errors import CidermillError
    from corpus.report import STATS_NAME, report_dir
    from pipelines.report_page import render_report

    stats = os.path.join(report_dir(args.dir), STATS_NAME)
    if not os.path.isdir(args.dir):
        raise CidermillError(f"{args.dir}: no such directory")
    if not os.path.exists(stats):
        raise CidermillError(f"{stats}: missing (this directory has no report)")
    try:
        path = render_report(args.dir)
    except (ValueError, KeyError) as e:
        raise CidermillError(f"{stats}: unreadable report ({type(e).__name__}: {e})") from None
    print(f"report: {path}")
    return 0
