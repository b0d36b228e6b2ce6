"""mbox import of one large plain mbox: the file as one work item against fixed byte ranges read
by parallel workers (crawl/mbox.py mbox_ranges). The code is bench/warc_import.py's, with `--mbox`:
the mbox is built from a JSONL of real documents (bench/debian_corpus.py writes one), one message
each; outputs of both sides must be equal.

    python bench/mbox_import.py --mbox /tmp/cidermill-bench/debian-2000w-12000.jsonl --rounds 3
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.warc_import import main  # noqa: E402

DEFAULT_JSONL = "/tmp/cidermill-bench/debian-2000w-12000.jsonl"

if __name__ == "__main__":
    argv = sys.argv[1:]
    sys.exit(main(argv if "--mbox" in argv else ["--mbox", DEFAULT_JSONL, *argv]))
