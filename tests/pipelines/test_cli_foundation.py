"""`cidermill shards ...` and `cidermill report` through the real console entry point."""
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from corpus.manifest import read_manifest
from corpus.report import ReportStats, Samples, write_report
from corpus.writer import write_dataset

CLI = [sys.executable, "-m", "pipelines.cli"]


def cli(*args):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=120)


@pytest.fixture
def dataset(tmp_path):
    d = str(tmp_path / "ds")
    t = pa.table({"id": [f"r{i}" for i in range(200)], "text": [f"row {i} " * 20 for i in range(200)]})
    write_dataset(d, "documents", t, target_bytes=3000)
    stats = ReportStats()
    st = stats.stage("quality")
    samples = Samples(k=5)
    for i in range(200):
        keep = i % 3 != 0
        st.record(keep, None if keep else "low_quality", {"quality": i / 200})
        if not keep:
            samples.add("low_quality", f"r{i}", {"id": f"r{i}", "text": f"<script>window.PWNED=1</script> row {i} & more"})
    st.counters["pii_email"] = 7
    write_report(d, stats, samples)
    return d


def test_help_and_user_errors(tmp_path):
    r = cli("--help")
    assert r.returncode == 0 and "shards" in r.stdout and "report" in r.stdout
    r = cli("shards", "info", str(tmp_path / "nope"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no such dataset directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("shards", "bogus")
    assert r.returncode == 2


def test_info_head_verify(dataset):
    r = cli("shards", "info", dataset)
    assert r.returncode == 0 and "documents" in r.stdout and "rows      200" in r.stdout
    r = cli("shards", "head", dataset, "-n", "3", "--columns", "id")
    assert r.returncode == 0 and r.stdout.splitlines() == ['{"id": "r0"}', '{"id": "r1"}', '{"id": "r2"}'] or \
        len(r.stdout.splitlines()) == 3
    assert cli("shards", "verify", dataset).returncode == 0
    shard = os.path.join(dataset, read_manifest(dataset).shards[1].path)
    with open(shard, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 1]))
    r = cli("shards", "verify", dataset)
    assert r.returncode == 1
    assert os.path.basename(shard) in r.stderr and "altered" in r.stderr


@pytest.mark.browser
def test_report_renders_in_chromium_and_escapes(dataset):
    r = cli("report", dataset)
    assert r.returncode == 0, r.stderr
    page_path = os.path.join(dataset, "_report", "index.html")
    assert os.path.exists(page_path)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page()
            page.goto("file://" + os.path.abspath(page_path))
            # plots render: every <img> loaded with a real size
            sizes = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth])")
            assert len(sizes) >= 2 and all(ok and w > 0 for ok, w in sizes), sizes
            assert page.locator("table").count() >= 2
            assert "low_quality" in page.content()
            # the crawled <script> is shown as text and never runs
            assert page.evaluate("window.PWNED") is None
            assert page.get_by_text("<script>window.PWNED=1</script>", exact=False).count() >= 1
            assert "pii_email" in page.inner_text("body")
        finally:
            browser.close()
