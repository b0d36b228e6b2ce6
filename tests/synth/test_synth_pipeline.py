"""run_synth and the CLI: shards, determinism across runs/engines/workers, reports, bad parameters."""
import json
import os

import pyarrow as pa
import pytest

from corpus.manifest import read_manifest
from corpus.reader import ShardDataset
from corpus.report import read_report, read_samples, report_dir
from corpus.schemas import PAGES, PAIRS
from corpus.verify import verify_dataset
from corpus.writer import write_dataset
from pipelines.cli import main
from pipelines.synth_pipeline import run_synth


def shard_digests(d):
    m = read_manifest(d)
    return [(s.path, s.sha256) for s in m.shards]


def test_captions_dataset_report_and_contact_sheet(tmp_path):
    out = str(tmp_path / "caps")
    s = run_synth("captions", 30, out, seed=1)
    assert s["rows"] == 30 and s["engine"] == "local"
    ds = ShardDataset(out)
    assert len(ds) == 30 and ds.schema.equals(PAIRS) and not verify_dataset(out)
    stats = read_report(out)
    fig = stats.figures[0]
    assert os.path.exists(os.path.join(report_dir(out), fig["path"])) and fig["path"].startswith("plots/")
    assert stats.stages["synth_captions"].kept == 30


def test_same_seed_identical_shards_across_runs_and_workers(tmp_path):
    a, b, c = (str(tmp_path / x) for x in "abc")
    run_synth("charts", 6, a, seed=9, width=192, height=192, target_bytes=40_000)
    run_synth("charts", 6, b, seed=9, width=192, height=192, target_bytes=40_000, workers=2)
    assert len(read_manifest(a).shards) > 1
    assert shard_digests(a) == shard_digests(b)
    run_synth("charts", 6, c, seed=10, width=192, height=192, target_bytes=40_000)
    assert shard_digests(a) != shard_digests(c)


def test_beam_engine_writes_the_same_bytes_as_local(tmp_path):
    a, b = str(tmp_path / "local"), str(tmp_path / "beam")
    run_synth("tables", 20, a, seed=4, engine="local", target_bytes=30_000)
    s = run_synth("tables", 20, b, seed=4, engine="beam", beam_args=["--runner=FnApiRunner"], target_bytes=30_000)
    assert s["engine"] == "beam" and s["rows"] == 20
    assert shard_digests(a) == shard_digests(b)
    assert read_report(b).stages["synth_tables"].kept == 20


def _pages(tmp_path):
    html_tables = [
        {"rows": [["City", "Visitors"], ["Oslo", "1,200"], ["Bergen", "800"]], "markdown": "", "caption": "Visits",
         "position": 0},
        {"rows": [["x"]], "markdown": "", "caption": None, "position": 5},
        {"rows": [["k", "v"]] + [[f"r{i}", str(i)] for i in range(2500)], "markdown": "", "caption": None,
         "position": 9},
    ]
    rows = [{"id": "page1", "url": "http://example.test/1", "title": "One", "language_hint": "en",
             "tables": html_tables},
            {"id": "page2", "url": "http://example.test/2", "title": "Two", "language_hint": "de", "tables": []}]
    d = str(tmp_path / "pages")
    write_dataset(d, "pages", pa.Table.from_pylist(rows, schema=PAGES))
    return d


@pytest.mark.slow
def test_tables_from_pages_local_and_multiprocess_beam_agree(tmp_path):
    pages = _pages(tmp_path)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    s = run_synth("tables", 3, a, seed=2, pages=pages, table_on_too_many_rows="drop")
    assert s["rows"] == 4 and s["dropped"] == {"too_few_rows": 1, "too_many_rows": 1}
    samples = read_samples(a)
    assert set(samples) == {"too_few_rows", "too_many_rows"}
    web = [r for r in ShardDataset(a).iter_rows() if r["page_url"]]
    assert len(web) == 1 and json.loads(web[0]["meta_json"])["source"] == "web"
    run_synth("tables", 3, b, seed=2, pages=pages, table_on_too_many_rows="drop",
              beam_args=["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    assert shard_digests(a) == shard_digests(b)
    assert read_report(b).stages["synth_tables"].dropped == {"too_few_rows": 1, "too_many_rows": 1}


@pytest.mark.parametrize("argv, msg", [
    (["synth", "charts", "--n", "-3"], "--n must be a non-negative integer"),
    (["synth", "charts", "--n", "2", "--types", "bar,pie"], "unknown chart type 'bar'"),
    (["synth", "charts", "--n", "2", "--width", "100000"], "chart width must be"),
    (["synth", "charts", "--n", "2", "--width", "4000", "--height", "200"], "too elongated"),
    (["synth", "captions", "--n", "2", "--width", "8"], "scene width must be"),
    (["synth", "captions", "--n", "2", "--max-items", "0"], "max items per scene"),
    (["synth", "charts", "--n", "2", "--languages", "xx"], "unknown chart language"),
    (["synth", "tables", "--n", "2", "--pages", "/nonexistent/pages"], "not a dataset"),
    (["synth", "captions", "--n", "2", "--pages", "/tmp"], "only applies to `synth tables`"),
])
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, argv, msg):
    rc = main(argv + ["--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "\n" not in err and msg in err and "Traceback" not in err


def test_cli_writes_dataset(tmp_path, capsys):
    out = str(tmp_path / "cli")
    assert main(["synth", "captions", "--n", "5", "--out", out, "--seed", "3", "--width", "96", "--height", "96"]) == 0
    assert "wrote 5 rows" in capsys.readouterr().out
    row = ShardDataset(out)[0]
    assert row["width"] == 96 and row["text"] and row["qa"]


def test_zero_items_is_an_empty_valid_dataset(tmp_path):
    out = str(tmp_path / "empty")
    assert run_synth("charts", 0, out)["rows"] == 0
    assert len(ShardDataset(out)) == 0 and not verify_dataset(out)


def test_ids_stable_and_unique(tmp_path):
    out = str(tmp_path / "ids")
    run_synth("captions", 12, out, seed=5, contact_sheets=False)
    ids = [r["id"] for r in ShardDataset(out).iter_rows(columns=["id"])]
    assert sorted(ids) == [f"synth-caption-5-{i:08d}" for i in range(12)]


def test_pages_without_tables_column_are_parsed_from_html(tmp_path):
    from corpus.schemas import compress_html
    schema = pa.schema([f for f in PAGES if f.name != "tables"])
    html = ("<table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>$3.50</td></tr>"
            "<tr><td>Cake</td><td>$4.25</td></tr></table>")
    pages = str(tmp_path / "p")
    write_dataset(pages, "pages", pa.Table.from_pylist(
        [{"id": "x", "url": "http://example.test/x", "raw_html_zstd": compress_html(html)}], schema=schema))
    out = str(tmp_path / "o")
    assert run_synth("tables", 0, out, pages=pages)["rows"] == 1
    meta = json.loads(ShardDataset(out)[0]["meta_json"])
    assert meta["table"] == [["Item", "Price"], ["Tea", "$3.50"], ["Cake", "$4.25"]]
