"""`cidermill images` end to end on a local image site: every bad input dropped with its reason,
duplicates and mismatched texts removed, interleaved documents in order, report figures, and the
same output with two worker processes."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from images_site import write_pages
from corpus.reader import ShardDataset
from corpus.report import read_report, report_dir
from corpus.verify import verify_dataset

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def images_run(image_site, tiny_clip, tmp_path_factory):
    from pipelines.cli import main

    base, cases, _ = image_site
    d = tmp_path_factory.mktemp("images")
    pages = write_pages(str(d / "pages"), base, cases)
    out = str(d / "out")
    args = ["images", "--pages", pages, "--out", out, "--clip-checkpoint", tiny_clip[0], "--allow-private",
            "--delay", "0", "--clip-batch-size", "8", "--clip-threads", "1"]
    assert main(args) == 0
    return pages, out, cases, args


def rows_by_name(out):
    ds = ShardDataset(os.path.join(out, "pairs"))
    by = {}
    for r in ds.iter_rows():
        if r["page_id"] != "page_optout":
            by[(r["image_url"].rsplit("/", 1)[1], r["text_source"])] = r
    return by


def test_opted_out_page_gives_no_pairs_and_no_images(images_run):
    _, out, _, _ = images_run
    rows = [r for r in ShardDataset(os.path.join(out, "pairs")).iter_rows() if r["page_id"] == "page_optout"]
    assert [r["drop_reason"] for r in rows] == ["page_training_optout"]
    doc = [d for d in ShardDataset(os.path.join(out, "interleaved")).iter_rows() if d["id"] == "page_optout"][0]
    assert doc["images_in"] == 1 and doc["images_kept"] == 0


def test_every_case_gets_its_reason(images_run):
    _, out, cases, _ = images_run
    by = rows_by_name(out)
    for name, case in cases.items():
        row = by[(name, "alt")]
        want = case["expect"]
        if want in (None, "clip_low_score", "any") or want.startswith("duplicate"):
            continue
        assert row["drop_reason"] == want, (name, row["drop_reason"], row["meta_json"])
    assert by[("corrupt.jpg", "alt")]["drop_reason"] in ("image_corrupt", "image_truncated", "image_not_an_image")
    assert by[("anim.gif", "alt")]["orig_format"] == "GIF" and json.loads(by[("anim.gif", "alt")]["meta_json"])["animated"]
    for (name, _), r in by.items():
        if r["drop_reason"] is None:
            assert r["image"] and r["mime"] == "image/jpeg" and r["clip_score"] is not None
            assert max(r["width"], r["height"]) <= 512 and len(r["sha256"]) == 64


def test_duplicates_keep_one_deterministic_survivor(images_run):
    _, out, _, _ = images_run
    by = rows_by_name(out)
    a, b = by[("good0.png", "alt")], by[("dup_exact.png", "alt")]
    dropped, kept = (a, b) if a["drop_reason"] else (b, a)
    assert dropped["drop_reason"] == "duplicate_image_exact" and kept["drop_reason"] is None
    # the survivor is the best-scoring pair of the cluster, ties to the smaller id
    assert json.loads(dropped["meta_json"])["duplicate_of"] == kept["id"]
    assert (-kept["clip_score"], kept["id"]) < (-dropped["clip_score"], dropped["id"])
    a, b = by[("good1.png", "alt")], by[("dup_near.jpg", "alt")]
    assert sorted([a["drop_reason"] or "", b["drop_reason"] or ""]) == ["", "duplicate_image_near"]


def test_clip_filter_drops_the_mismatched_text(images_run):
    _, out, _, _ = images_run
    by = rows_by_name(out)
    mis = by[("mismatch.png", "alt")]
    goods = [by[(f"good{i}.png", "alt")]["clip_score"] for i in range(2, 6)]
    assert mis["clip_score"] < min(goods)
    assert mis["drop_reason"] == "clip_low_score"
    cap = by[("captioned.png", "caption")]
    assert cap["text"].startswith("A ") and cap["drop_reason"] is None
    rep = read_report(os.path.join(out, "pairs"))
    assert rep.info["clip_cut"] is not None and mis["clip_score"] < rep.info["clip_cut"] <= min(goods)


def test_interleaved_documents_keep_images_in_place(images_run):
    pages, out, cases, _ = images_run
    docs = list(ShardDataset(os.path.join(out, "interleaved")).iter_rows())
    assert len(docs) == len(ShardDataset(pages))
    shas = {r["sha256"] for r in ShardDataset(os.path.join(out, "pairs")).iter_rows(["sha256"]) if r["sha256"]}
    total_kept = 0
    for doc in docs:
        items = doc["items"]
        assert items[-1]["type"] == "text" and items[-1]["text"].endswith("The end.")
        imgs = [it for it in items if it["type"] == "image"]
        assert len(imgs) == doc["images_kept"] <= doc["images_in"]
        total_kept += len(imgs)
        for k, it in enumerate(items):
            if it["type"] == "image":
                assert it["image_sha256"] in shas and it["clip_score"] >= 0.1
                j = int(items[k - 1]["text"].split()[1]) if k and items[k - 1]["type"] == "text" else None
                assert j is not None   # an image follows the paragraph it was placed after
        names = [it["image_src"].rsplit("/", 1)[1] for it in imgs]
        assert not any(n in names for n in ("zero.jpg", "html.jpg", "bomb.png", "missing.png"))
    assert total_kept >= 5


def test_report_and_dataset_integrity(images_run):
    _, out, cases, _ = images_run
    pairs = os.path.join(out, "pairs")
    assert verify_dataset(pairs) == [] and verify_dataset(os.path.join(out, "interleaved")) == []
    rep = read_report(pairs)
    assert rep.stages["pairs"].rows_in == len(cases) + 2          # + the figcaption pair + the opted-out page
    assert rep.stages["images"].rows_in == len(cases)
    assert rep.stages["pairs"].histograms["clip_score"].counts
    figs = {f["path"] for f in rep.figures}
    assert "plots/clip_score_hist.png" in figs and "plots/sheet_kept.png" in figs
    assert "plots/sheet_image_is_html.png" in figs
    for f in figs:
        with open(os.path.join(report_dir(pairs), f), "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    dropped = os.listdir(os.path.join(report_dir(pairs), "dropped"))
    assert "image_truncated.jsonl" in dropped


def test_same_output_with_two_worker_processes(images_run, tmp_path):
    from pipelines.cli import main

    pages, out, _, args = images_run
    out2 = str(tmp_path / "out2")
    args2 = [a if a != out else out2 for a in args] + ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]
    assert main(args2) == 0
    for sub in ("pairs", "interleaved"):
        a = ShardDataset(os.path.join(out, sub)).to_table().sort_by("id")
        b = ShardDataset(os.path.join(out2, sub)).to_table().sort_by("id")
        diff = [c for c in a.column_names if not a.column(c).equals(b.column(c))]
        assert diff == [], (sub, diff)


def test_clear_errors(images_run, tmp_path, capsys):
    from pipelines.cli import main

    pages, _, _, _ = images_run
    assert main(["images", "--pages", str(tmp_path / "nope"), "--out", str(tmp_path / "o"),
                 "--clip-model", "cidermill-tiny-clip", "--clip-random-init"]) == 1
    assert main(["images", "--pages", pages, "--out", str(tmp_path / "o"), "--clip-model", "ViT-B-32"]) == 1
    assert main(["images", "--pages", pages, "--out", str(tmp_path / "o"),
                 "--clip-checkpoint", str(tmp_path / "missing.safetensors")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 3


def test_top_percent_cut_is_global_with_two_workers(images_run, tmp_path):
    """--clip-top-percent over two worker processes: the cut is the in-memory cutoff() of every
    candidate's score, and exactly the candidates at or above it are kept."""
    from filters.clip_select import ClipSelectConfig, cutoff
    from pipelines.cli import main

    pages, out, _, args = images_run
    out2 = str(tmp_path / "out_top")
    args2 = [a if a != out else out2 for a in args] + ["--clip-threshold", "none", "--clip-top-percent", "40",
                                                      "--direct_num_workers=2", "--direct_running_mode=multi_processing"]
    assert main(args2) == 0
    rows = list(ShardDataset(os.path.join(out2, "pairs")).iter_rows())
    cands = [r for r in rows if r["drop_reason"] in (None, "clip_low_score")]   # the cut is the last check
    assert len(cands) >= 5
    want = cutoff([r["clip_score"] if r["clip_score"] is not None else float("nan") for r in cands],
                  ClipSelectConfig(None, 40))
    cut = read_report(os.path.join(out2, "pairs")).info["clip_cut"]
    assert np.float32(cut) == np.float32(want)      # rows store clip_score as float32, the report the float
    kept = [r for r in cands if r["drop_reason"] is None]
    assert kept and all(r["clip_score"] >= want for r in kept)
    assert all(r["clip_score"] is None or r["clip_score"] < want for r in cands if r["drop_reason"])


def test_same_bytes_on_a_dask_cluster(images_run, tmp_path, dask_cluster):
    """A real `dask scheduler` + 2 workers (--runner dask) write the in-process run's shards."""
    from corpus.manifest import read_manifest
    from pipelines.cli import main

    _, out, _, args = images_run
    out2 = str(tmp_path / "dask")
    args2 = [a if a != out else out2 for a in args]
    assert main(args2 + ["--runner", "dask", f"--dask_client_address={dask_cluster}", "--dask_npartitions=2"]) == 0
    for sub in ("pairs", "interleaved"):
        a, b = read_manifest(os.path.join(out, sub)), read_manifest(os.path.join(out2, sub))
        assert a.rows > 0 and [s.sha256 for s in a.shards] == [s.sha256 for s in b.shards], sub


def test_images_job_writes_pairs_interleaved_and_report_to_s3(images_run, s3):
    """`cidermill images --out s3://...`: both datasets, their reports and the figures land in the
    bucket, and the shards are the bytes of the local run."""
    import pyarrow.fs as pafs

    from corpus.manifest import read_manifest
    from pipelines.cli import main
    _, out, _, args = images_run
    remote = list(args)
    remote[remote.index("--out") + 1] = "s3://cider/images"
    assert main(remote) == 0
    for name in ("pairs", "interleaved"):
        local = [(s.path, s.rows, s.sha256) for s in read_manifest(os.path.join(out, name)).shards]
        theirs = [(s.path, s.rows, s.sha256) for s in read_manifest(f"s3://cider/images/{name}").shards]
        assert local and theirs == local and verify_dataset(f"s3://cider/images/{name}") == []
    fs, path = pafs.FileSystem.from_uri("s3://cider/images")
    keys = {i.path[len(path) + 1:] for i in fs.get_file_info(pafs.FileSelector(path, recursive=True))}
    assert {"pairs/_report/stats.json", "pairs/_report/plots/clip_score_hist.png",
            "interleaved/_report/stats.json"} <= keys
    assert any(k.startswith("pairs/_report/plots/sheet_") for k in keys)
    assert any(k.startswith("pairs/_report/dropped/") for k in keys) and not [k for k in keys if ".tmp" in k]
