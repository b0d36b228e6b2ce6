"""Tables: HTML parsing with spans, normalisation and drop reasons, markdown, QA re-derived."""
import io
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from synth.html_tables import parse_html_tables
from synth.tables import make_generated_table, make_web_table
from synth.tables_core import TableLimits, normalise_grid, to_markdown

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def num(s):
    s = s.strip()
    for p in "$€£¥":
        s = s.removeprefix(p)
    return float(s.removesuffix("%").replace(",", ""))


def decs(cells):
    return max((len(c.split(".")[1]) for c in cells if "." in c), default=0)


def expected(grid, a):
    body = grid[1:]
    op = a["op"]
    if op == "cell":
        return body[a["row"]][a["col"]]
    if op == "count_rows":
        return str(len(body))
    col = [num(r[a["col"]]) for r in body] if "col" in a else None
    d = decs([r[a["col"]].removesuffix("%") for r in body]) if "col" in a else 0
    if op == "col_sum":
        return f"{sum(col):.{d}f}"
    if op == "col_mean":
        return f"{float(np.mean(col)):.2f}"
    if op in ("col_argmax", "col_argmin"):
        target = max(col) if op == "col_argmax" else min(col)
        return body[col.index(target)][0]
    if op == "compare_rows":
        return body[a["a"]][0] if col[a["a"]] > col[a["b"]] else body[a["b"]][0]
    if op == "diff_rows":
        return f"{abs(col[a['a']] - col[a['b']]):.{d}f}"
    if op == "row_sum":
        cells = [c for c in body[a["row"]][1:]]
        return f"{sum(num(c) for c in cells):.{decs(cells)}f}"
    raise AssertionError(op)


def check_row(row):
    meta = json.loads(row["meta_json"])
    grid = meta["table"]
    assert meta["table_markdown"] == to_markdown(grid)
    assert len(row["qa"]) == len(meta["qa_args"]) >= 2
    for qa, a in zip(row["qa"], meta["qa_args"]):
        assert qa["answer"] == expected(grid, a), (qa, a)
    img = Image.open(io.BytesIO(row["image"]))
    assert img.size == (row["width"], row["height"]) and img.width > 60 and img.height > 40
    return meta


def test_generated_tables_qa_and_markdown():
    types = set()
    for i in range(24):
        row = make_generated_table(3, i)
        check_row(row)
        types |= {q["type"] for q in row["qa"]}
    assert types >= {"value_lookup", "count", "sum", "average", "max", "min", "comparison", "difference"}


HTML = """<html><body>
<table><caption>Medals</caption>
<tr><th>Country</th><th colspan="2">Medals</th><th>Total</th></tr>
<tr><td rowspan="2">Norway</td><td>16</td><td>8</td><td>24</td></tr>
<tr><td>3</td><td>1</td><td>4</td></tr>
<tr><td>Germany</td><td></td><td>12</td><td>1,012</td></tr>
<tr><td></td><td></td><td></td><td></td></tr>
</table>
<table><tr><td>only one cell</td></tr></table>
</body></html>"""


def test_html_spans_repeat_and_empty_rows_drop():
    tables = parse_html_tables(HTML)
    assert len(tables) == 2 and tables[0]["caption"] == "Medals"
    g = tables[0]["rows"]
    assert g[0] == ["Country", "Medals", "Medals", "Total"]
    assert g[2][0] == "Norway"  # rowspan repeated
    grid, reason, notes = normalise_grid(g)
    assert reason is None and len(grid) == 4  # the all-empty row is gone
    assert grid[0] == ["Country", "Medals", "Medals (2)", "Total"] and notes["renamed_headers"] == 1
    assert normalise_grid(tables[1]["rows"])[1] == "too_few_rows"


def test_web_table_row_and_drop_reasons():
    page = {"id": "p1", "url": "http://example.test/a", "title": "T", "language_hint": "en"}
    t = parse_html_tables(HTML)
    row, reason, _ = make_web_table(0, page, 0, t[0])
    assert reason is None and row["page_url"] == page["url"]
    check_row(row)
    assert make_web_table(0, page, 1, t[1])[1] == "too_few_rows"
    assert make_web_table(0, page, 2, {"rows": []})[1] == "empty_table"
    assert make_web_table(0, page, 3, {"rows": None})[1] == "empty_table"


def test_thousands_of_rows_truncated_or_dropped():
    big = [["id", "value"]] + [[f"r{i}", str(i)] for i in range(3000)]
    grid, reason, notes = normalise_grid(big, TableLimits(max_rows=25))
    assert reason is None and len(grid) == 26 and notes["truncated_rows"] == 2975
    assert normalise_grid(big, TableLimits(on_too_many_rows="drop"))[1] == "too_many_rows"
    assert normalise_grid(big, TableLimits(drop_over_rows=1000))[1] == "too_many_rows"
    page = {"id": "p2", "url": "http://example.test/b"}
    row, reason, _ = make_web_table(0, page, 0, {"rows": big}, TableLimits(max_rows=25))
    meta = check_row(row)
    assert meta["normalisation"]["truncated_rows"] == 2975


def test_ragged_rows_pipes_and_long_cells():
    rows = [["a", "b|c", "x"], ["1", "2"], ["3", "y" * 500, "5"]]
    grid, reason, notes = normalise_grid(rows)
    assert reason is None and all(len(r) == 3 for r in grid) and notes["padded_rows"] == 1
    assert len(grid[2][1]) == 80 and grid[2][1].endswith("…")
    assert "b\\|c" in to_markdown(grid)


_DIGEST = """
import hashlib, json, sys
from synth.tables import make_generated_table
rows = [make_generated_table(seed, i) for seed in (0, 1) for i in (0, 5)]
blob = json.dumps(rows, sort_keys=True, default=lambda v: v.hex() if isinstance(v, bytes) else repr(v))
print(hashlib.sha256(blob.encode()).hexdigest())
"""


def _digest_in_subprocess(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": ROOT}
    r = subprocess.run([sys.executable, "-c", _DIGEST], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip()


def test_deterministic_across_processes():
    """The same seed and index give the same row (image bytes included) in two fresh processes
    with different str-hash salts, and in this one."""
    a, b = _digest_in_subprocess("1"), _digest_in_subprocess("2")
    assert len(a) == 64 and a == b
    assert make_generated_table(0, 5) == make_generated_table(0, 5)
    assert make_generated_table(0, 5) != make_generated_table(1, 5)
