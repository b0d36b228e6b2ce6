"""Charts: every QA answer re-derived from the stored data; stored code redraws the stored image."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from synth.chart_data import CHART_TYPES
from synth.charts import make_chart


def f(v, d):
    return f"{v:.{d}f}"


def expected(data, a):
    """Independent re-computation of one QA answer from the chart's data (not using synth.chart_qa)."""
    op, dec = a["op"], data["decimals"]
    S = data.get("series")
    if op == "value":
        return f(S[a["series"]]["values"][a["cat"]], dec)
    if op in ("argmax", "argmin"):
        v = S[a["series"]]["values"]
        best = max(v) if op == "argmax" else min(v)
        assert v.count(best) == 1
        return data["categories"][v.index(best)]
    if op == "compare_cats":
        v = S[a["series"]]["values"]
        return data["categories"][a["a"] if v[a["a"]] > v[a["b"]] else a["b"]]
    if op == "compare_series":
        x, y = S[a["a"]]["values"][a["cat"]], S[a["b"]]["values"][a["cat"]]
        return S[a["a"]]["name"] if x > y else S[a["b"]]["name"]
    if op == "diff":
        v = S[a["series"]]["values"]
        return f(abs(v[a["a"]] - v[a["b"]]), dec)
    if op == "ratio":
        v = S[a["series"]]["values"]
        return f(v[a["a"]] / v[a["b"]], 2)
    if op == "trend":
        v = S[a["series"]]["values"]
        return "increase" if v[-1] > v[0] else "decrease"
    if op == "sum_series":
        return f(float(np.sum(S[a["series"]]["values"])), dec)
    if op == "mean_series":
        return f(float(np.mean(S[a["series"]]["values"])), 2)
    if op == "sum_cat":
        return f(sum(s["values"][a["cat"]] for s in S), dec)
    if op == "count_series":
        return str(len(S))
    if op == "count_cats":
        return str(len(data["categories"]))
    if op == "count_points":
        return str(len(S[a["series"]]["y"]))
    if op in ("max_y", "min_y"):
        y = S[a["series"]]["y"]
        return f(max(y) if op == "max_y" else min(y), dec)
    if op == "mean_x":
        return f(float(np.mean(S[a["series"]]["x"])), 2)
    if op == "range_y":
        y = S[a["series"]]["y"]
        return f(max(y) - min(y), dec)
    if op == "compare_mean_y":
        m = [float(np.mean(S[i]["y"])) for i in (a["a"], a["b"])]
        return S[a["a"]]["name"] if m[0] > m[1] else S[a["b"]]["name"]
    vals, edges = data.get("values"), data.get("bin_edges")
    if op == "bin_count":
        lo, hi = edges[a["bin"]], edges[a["bin"] + 1]
        last = a["bin"] == len(edges) - 2
        return str(sum(1 for x in vals if lo <= x < hi or (last and x == hi)))
    if op == "argmax_bin":
        counts = [sum(1 for x in vals if lo <= x < hi or (j == len(edges) - 2 and x == hi))
                  for j, (lo, hi) in enumerate(zip(edges, edges[1:]))]
        j = counts.index(max(counts))
        return f"{edges[j]}-{edges[j + 1]}"
    if op == "count_values":
        return str(len(vals))
    if op == "mean_values":
        return f(float(np.mean(vals)), 2)
    if op == "sum_values":
        return str(sum(vals))
    if op == "max_value":
        return str(max(vals))
    if op == "min_value":
        return str(min(vals))
    if op == "count_bins":
        return str(len(edges) - 1)
    m, rows, cols = data.get("matrix"), data.get("row_labels"), data.get("col_labels")
    if op == "cell":
        return f(m[a["row"]][a["col"]], dec)
    if op in ("argmax_cell", "argmin_cell"):
        cells = [(v, r, c) for r, row in enumerate(m) for c, v in enumerate(row)]
        v, r, c = (max if op == "argmax_cell" else min)(cells)
        return f"{rows[r]}, {cols[c]}"
    if op == "compare_cells":
        (r1, c1), (r2, c2) = a["a"], a["b"]
        return f"{rows[r1]}, {cols[c1]}" if m[r1][c1] > m[r2][c2] else f"{rows[r2]}, {cols[c2]}"
    if op == "diff_cells":
        (r1, c1), (r2, c2) = a["a"], a["b"]
        return f(abs(m[r1][c1] - m[r2][c2]), dec)
    if op == "sum_row":
        return f(sum(m[a["row"]]), dec)
    if op == "mean_col":
        return f(float(np.mean([row[a["col"]] for row in m])), 2)
    if op == "count_rows":
        return str(len(rows))
    raise AssertionError(f"unknown op {op}")


@pytest.fixture(scope="module")
def charts():
    # every chart type twice, at a small size (QA does not depend on size)
    return [make_chart(7, i, 320, 256, chart_types=[t]) for i, t in enumerate(CHART_TYPES * 2)]


def test_every_qa_answer_rederived_from_data(charts):
    n = 0
    types = set()
    for row in charts:
        meta = json.loads(row["meta_json"])
        assert len(row["qa"]) == len(meta["qa_args"]) >= 4
        for qa, args in zip(row["qa"], meta["qa_args"]):
            assert qa["answer"] == expected(meta["data"], args), (qa, args)
            types.add(qa["type"])
            n += 1
    assert n >= 80
    assert types >= {"value_lookup", "max", "min", "comparison", "trend", "sum", "average", "count", "difference",
                     "ratio"}


def test_rows_match_pairs_contract(charts):
    from corpus.schemas import PAIRS
    import pyarrow as pa
    t = pa.Table.from_pylist(charts, schema=PAIRS)
    assert t.num_rows == len(charts)
    for row in charts:
        img = Image.open(io.BytesIO(row["image"]))
        assert img.format == "PNG" and img.size == (row["width"], row["height"]) == (320, 256)
        assert row["text_source"] == "synthetic:chart:sentence" and row["text"]
        meta = json.loads(row["meta_json"])
        assert set(meta["captions"]) >= {"keywords", "sentence", "paragraph"}
        assert meta["table"][0] and len(meta["table"]) > 1
        assert img.info.get("Software") is None  # no version stamp: bytes stay stable


def test_every_language_renders_with_its_labels():
    from synth.lexicon import LANGUAGES
    for i, lang in enumerate(LANGUAGES):
        row = make_chart(11, i, 160, 160, chart_types=["grouped_bar"], languages=[lang])
        meta = json.loads(row["meta_json"])
        assert row["language"] == lang and meta["data"]["title"] in meta["code"]


def test_stored_code_redraws_identical_png(tmp_path, charts):
    # run the code as a user would: a fresh interpreter, `python chart.py` writes chart.png. The
    # generator draws through the same code but with a per-process font-match memo and a renderer
    # reused from chart to chart (synth.fonts / synth.chart_code); the fresh interpreter has neither,
    # so equal bytes for one chart of every type also show that those shortcuts change no pixel.
    picks = list({json.loads(r["meta_json"])["chart_type"]: r for r in charts}.values())
    assert len(picks) == len(CHART_TYPES)
    for k, row in enumerate(picks):
        (tmp_path / f"c{k}.py").write_text(json.loads(row["meta_json"])["code"], encoding="utf-8")
    script = "; ".join(f"import runpy; runpy.run_path('c{k}.py', run_name='__main__'); "
                       f"import os; os.rename('chart.png', 'c{k}.png')" for k in range(len(picks)))
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True, timeout=120)
    for k, row in enumerate(picks):
        assert (tmp_path / f"c{k}.png").read_bytes() == row["image"], json.loads(row["meta_json"])["chart_type"]


def test_row_fields_match_the_stored_png(charts):
    # size and phash are computed from the image the code returns (no PNG decode): same as from the PNG
    from synth.chart_code import render_chart_code
    from synth.pairs import phash_hex
    for k, row in enumerate(charts):
        img = Image.open(io.BytesIO(row["image"]))
        assert img.mode == "RGB" and (img.width, img.height) == (row["width"], row["height"])
        assert row["phash"] == phash_hex(img)
        assert img.info["dpi"] == pytest.approx((100, 100), abs=0.01)
        if k < 4:  # the script's own PNG writer: decoding gives back exactly the pixels it drew
            png, drawn = render_chart_code(json.loads(row["meta_json"])["code"])
            assert png == row["image"] and np.array_equal(np.asarray(img), np.asarray(drawn))


def test_font_memo_finds_what_matplotlib_finds():
    from matplotlib import font_manager
    from synth import fonts
    if not fonts.fast_font_lookup():
        pytest.skip("bitmap fonts installed: memo not used")
    fm = font_manager.fontManager
    for fam in fonts.LATIN_FAMILIES + tuple(f for fams in fonts.CJK_FAMILIES.values() for f in fams) + ("serif",):
        for size in (6.5, 9.0, 13.75):
            for weight in ("normal", "bold"):
                prop = font_manager.FontProperties(family=[fam, "DejaVu Sans"], size=size, weight=weight)
                assert fm.findfont(prop) == font_manager.FontManager.findfont(fm, prop), (fam, size, weight)
                assert fm._find_fonts_by_props(prop) == font_manager.FontManager._find_fonts_by_props(fm, prop)
    # generic families follow the rc font lists
    import matplotlib
    for serif in (["DejaVu Serif"], ["Liberation Serif", "DejaVu Serif"]):
        with matplotlib.rc_context({"font.serif": serif}):
            prop = font_manager.FontProperties(family=["serif"], size=9.0)
            assert fm._find_fonts_by_props(prop) == font_manager.FontManager._find_fonts_by_props(fm, prop)
            assert fm.findfont(prop) == font_manager.FontManager.findfont(fm, prop)


def test_cjk_labels_use_a_cjk_font():
    from synth import fonts
    if not fonts.has_cjk_font():
        pytest.skip("no CJK font installed (Debian fonts-noto-cjk)")
    row = make_chart(5, 0, 256, 256, languages=["zh"])
    meta = json.loads(row["meta_json"])
    assert "CJK" in meta["style"]["font"]


def test_same_seed_same_bytes_other_seed_differs():
    a, b, c = make_chart(3, 4), make_chart(3, 4), make_chart(4, 4)
    assert a["image"] == b["image"] and a["meta_json"] == b["meta_json"]
    assert a["image"] != c["image"]


def test_vary_size_draws_sizes_around_the_base():
    sizes = {(r["width"], r["height"]) for r in (make_chart(2, i, 200, 200, vary_size=True, chart_types=["pie"])
                                                 for i in range(4))}
    assert len(sizes) > 1 and all(128 <= w <= 300 and 128 <= h <= 300 for w, h in sizes)
