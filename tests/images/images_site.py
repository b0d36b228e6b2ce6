"""Pages rows pointing at the images tests' local site. A module of its own, not conftest.py: several
test folders have a conftest.py, and `from conftest import ...` finds whichever was imported first."""
from __future__ import annotations

import pyarrow as pa


def write_pages(out_dir: str, base: str, cases: dict[str, dict], per_page: int = 6) -> str:
    from corpus.schemas import PAGES
    from corpus.writer import write_dataset

    names = sorted(cases)
    rows = []
    for p in range(0, len(names), per_page):
        chunk = names[p:p + per_page]
        text_parts, images = [], []
        for j, name in enumerate(chunk):
            before = f"Paragraph {j} of page {p} talks about the garden and the picture below."
            text_parts.append(before)
            pos = len("\n\n".join(text_parts))
            images.append({"src": f"{base}/{name}", "alt": cases[name]["alt"], "caption": cases[name]["caption"],
                           "text_before": before, "text_after": cases[name]["alt"] or "", "position": pos})
        text = "\n\n".join(text_parts) + "\n\nThe end."
        url = f"{base}/page{p}.html"
        rows.append({"id": f"page{p:03d}", "url": url, "final_url": url, "host": "127.0.0.1", "status": 200,
                     "text": text, "images": images, "language_hint": "en", "training_allowed": True,
                     "source": "crawl", "headers": [], "tables": [], "outlinks": []})
    # a page whose publisher opted out of training use: crawled, but its images are never fetched
    url = f"{base}/optout.html"
    rows.append({"id": "page_optout", "url": url, "final_url": url, "host": "127.0.0.1", "status": 200,
                 "text": "Opted out. The end.", "language_hint": "en", "training_allowed": False, "source": "crawl",
                 "images": [{"src": f"{base}/good2.png", "alt": cases["good2.png"]["alt"], "caption": None,
                             "text_before": "Opted out.", "text_after": "", "position": 10}],
                 "headers": [], "tables": [], "outlinks": []})
    write_dataset(out_dir, "pages", pa.Table.from_pylist(rows, schema=PAGES))
    return out_dir
