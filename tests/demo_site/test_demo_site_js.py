"""The JavaScript pages really build their text in a browser (Debian Chromium via Playwright):
js_only_snippets appear after load, and the lazy page's only after scrolling."""
from __future__ import annotations

import os
import re

import pytest

from pipelines.demo_site import DemoSite, html_pages, load_ground_truth

CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no chromium at {CHROMIUM}")]


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s)


def test_js_pages_render_their_text_only_in_a_browser():
    from playwright.sync_api import sync_playwright

    gt = load_ground_truth()
    js = html_pages(gt, categories="js_rendered")
    assert {e["js"] for e in js.values()} == {"inline", "fetch", "scroll", "wiki"}
    with DemoSite() as site, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            for path, e in sorted(js.items()):
                page.goto(site.url + path, wait_until="load")
                page.wait_for_function("document.querySelectorAll('article').length > 0", timeout=15000)
                before = _norm(page.inner_text("body"))
                for s in e["expected_snippets"]:
                    assert _norm(s) in before, (path, s)
                if e["js"] == "scroll":
                    assert not any(_norm(s) in before for s in e["js_only_snippets"]), path
                    page.mouse.wheel(0, 4000)
                    page.wait_for_function("document.querySelectorAll('article').length > 1", timeout=15000)
                after = _norm(page.inner_text("body"))
                for s in e["js_only_snippets"]:
                    assert _norm(s) in after, (path, s)
                assert page.title().startswith(e["title"]), path
        finally:
            browser.close()
    assert "/js/data/article.json" in site.requested_paths()
