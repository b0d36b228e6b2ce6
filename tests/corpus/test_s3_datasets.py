"""Datasets at s3://bucket/prefix against a real S3-compatible server (moto_server on 127.0.0.1):
write (temporary keys, manifest last), read, verify, pyarrow.dataset, a Beam job writing the same
bytes as on disk, a Beam job on Dask workers writing there, and one-line errors for a missing bucket,
refused credentials and an output that holds another dataset."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pytest

from corpus import objectstore
from corpus.errors import ShardError
from corpus.manifest import read_manifest
from corpus.reader import ShardDataset
from corpus.verify import verify_dataset
from corpus.writer import write_dataset
from pipelines.cli import main
from s3_server import moto

pytestmark = pytest.mark.slow


def table(n=200):
    return pa.table({"id": [f"d{i:04d}" for i in range(n)], "text": [f"document {i} " * 30 for i in range(n)]})


def digests(d):
    return [(s.path, s.rows, s.sha256) for s in read_manifest(d).shards]


def test_round_trip_verify_and_pyarrow_dataset(s3, tmp_path, capsys):
    uri = "s3://cider/docs"
    m = write_dataset(uri, "documents", table(), target_bytes=20_000)
    local = str(tmp_path / "docs")
    write_dataset(local, "documents", table(), target_bytes=20_000)
    assert len(m.shards) > 1 and digests(uri) == digests(local)       # same bytes as on disk
    ds = ShardDataset(uri)
    assert len(ds) == 200 and ds[17]["id"] == "d0017" and ds.to_table().equals(ShardDataset(local).to_table())
    assert verify_dataset(uri) == []
    fs, path = pafs.FileSystem.from_uri(uri)
    assert pads.dataset(path, format="ipc", filesystem=fs).count_rows() == 200   # _manifest, _report skipped
    keys = [i.base_name for i in fs.get_file_info(pafs.FileSelector(path))]
    assert not [k for k in keys if ".tmp-" in k]                           # no temporary key left behind
    assert main(["shards", "verify", uri]) == 0
    with fs.open_output_stream(path + "/part-00001.arrow") as f:         # someone rewrites a shard
        f.write(b"not arrow")
    assert [p.path.rsplit("/", 1)[1] for p in verify_dataset(uri)] == ["part-00001.arrow"]
    capsys.readouterr()
    assert main(["shards", "verify", uri]) == 1


def test_beam_job_writes_to_s3_locally_and_on_dask(s3, tmp_path, dask_cluster):
    from pipelines.synth_pipeline import run_synth

    local = str(tmp_path / "local")
    run_synth("tables", 10, local, seed=3, engine="beam", beam_args=["--runner=FnApiRunner"], target_bytes=15_000)
    run_synth("tables", 10, "s3://cider/synth", seed=3, engine="beam", beam_args=["--runner=FnApiRunner"],
              target_bytes=15_000)
    # Dask workers are separate processes: they get the store's settings from their own environment
    # in production; here the test cluster inherited none, so point them at it explicitly
    from dask.distributed import Client
    with Client(f"tcp://{dask_cluster}", timeout=30) as c:
        c.run(lambda env: os.environ.update(env), {k: v for k, v in os.environ.items() if k.startswith("AWS_")})
    run_synth("tables", 10, "s3://cider/synth-dask", seed=3, engine="beam", target_bytes=15_000,
              beam_args=["--runner", "dask", f"--dask_client_address={dask_cluster}", "--dask_npartitions=2"])
    assert len(digests(local)) > 1
    assert digests("s3://cider/synth") == digests(local) == digests("s3://cider/synth-dask")
    assert verify_dataset("s3://cider/synth-dask") == []


def test_missing_bucket_and_other_dataset_are_one_line_errors(s3, capsys):
    with pytest.raises(ShardError, match="bucket 'nosuchbucket' does not exist"):
        write_dataset("s3://nosuchbucket/x", "documents", table(5))
    write_dataset("s3://cider/taken", "documents", table(5))
    before = digests("s3://cider/taken")
    rc = main(["synth", "tables", "--n", "3", "--out", "s3://cider/taken"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "already holds a different dataset" in err and "\n" not in err
    assert digests("s3://cider/taken") == before and ShardDataset("s3://cider/taken").to_table().num_rows == 5
    rc = main(["shards", "info", "s3://nosuchbucket/x"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "does not exist" in err and "\n" not in err


def test_refused_credentials_are_one_line(tmp_path, monkeypatch, capsys):
    with moto(tmp_path, INITIAL_NO_AUTH_ACTION_COUNT="0") as url:   # this server checks credentials
        monkeypatch.setenv("AWS_ENDPOINT_URL", url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGKEY")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
        with pytest.raises(ShardError, match="refused the credentials"):
            write_dataset("s3://cider/x", "documents", table(5))
        rc = main(["shards", "verify", "s3://cider/x"])
        err = capsys.readouterr().err.strip()
        assert rc == 1 and "refused the credentials" in err and "\n" not in err


def test_manifest_naming_a_key_outside_the_prefix_is_refused(s3):
    """On object storage a shard name is a plain key directly under the prefix: a manifest that names
    `../other/part-00000.arrow` never makes the reader or verify open another dataset's object."""
    import json
    write_dataset("s3://cider/victim", "documents", table(5))
    write_dataset("s3://cider/evil", "documents", table(5))
    fs, path = pafs.FileSystem.from_uri("s3://cider/evil")
    with fs.open_input_stream(path + "/_manifest.json") as f:
        m = json.loads(f.read())
    m["shards"][0]["path"] = "../victim/" + m["shards"][0]["path"]
    with fs.open_output_stream(path + "/_manifest.json") as f:
        f.write(json.dumps(m).encode())
    with pytest.raises(ShardError, match="must be a plain file name"):
        ShardDataset("s3://cider/evil")
    with pytest.raises(ShardError, match="must be a plain file name"):
        verify_dataset("s3://cider/evil")


def test_text_job_writes_dataset_rejected_rows_and_report_to_s3(s3, tmp_path, capsys):
    """`cidermill text --out s3://...`: the kept and the rejected datasets, stats, dropped samples and the
    HTML page with its figures all land in the bucket; the shards are the bytes of a local run."""
    import yaml
    from corpus.schemas import PAGES
    rows = [{"id": f"p{i:03d}", "url": f"http://site.test/{i}",
             "text": "\n".join(f"Line {j} of page {i} says something plain and true about apples." for j in range(12))}
            for i in range(30)]
    rows += [{"id": "short", "url": "http://site.test/s", "text": "too short"},
             {"id": "empty", "url": "http://site.test/e", "text": ""}]
    pages = str(tmp_path / "pages")
    write_dataset(pages, "pages", pa.Table.from_pylist(rows, schema=PAGES))
    cfg = tmp_path / "text.yaml"
    cfg.write_text(yaml.safe_dump({"stages": ["input", "c4_lines", "gopher"]}))
    local = str(tmp_path / "docs")
    args = ["--in", pages, "--config", str(cfg), "--runner=FnApiRunner"]
    assert main(["text", "--out", local, *args]) == 0
    assert main(["text", "--out", "s3://cider/text/docs", *args]) == 0
    capsys.readouterr()
    assert len(ShardDataset(local + ".rejected")) >= 2          # both datasets hold rows to compare
    for suffix in ("", ".rejected"):
        assert digests(local + suffix) and digests("s3://cider/text/docs" + suffix) == digests(local + suffix)
        assert verify_dataset("s3://cider/text/docs" + suffix) == []
        assert ".staging" not in objectstore.listdir("s3://cider/text/docs" + suffix)  # the writer's blobs went
    assert main(["shards", "verify", "s3://cider/text/docs"]) == 0
    assert 0 < len(ShardDataset("s3://cider/text/docs")) < len(rows)
    # the local engine with 2 workers (rows held by the workers, exchanged through the staging area
    # on the object store, pipelines/text_held.py): the same bytes, no staging left
    held = ["--in", pages, "--config", str(cfg), "--workers", "2", "--out", "s3://cider/text/held"]
    assert main(["text", *held]) == 0
    capsys.readouterr()
    for suffix in ("", ".rejected"):
        assert digests("s3://cider/text/held" + suffix) == digests(local + suffix)
        assert ".staging" not in objectstore.listdir("s3://cider/text/held" + suffix)
    fs, path = pafs.FileSystem.from_uri("s3://cider/text/docs/_report")
    keys = {i.path[len(path) + 1:] for i in fs.get_file_info(pafs.FileSelector(path, recursive=True))}
    assert {"stats.json", "index.html", "plots/funnel.png"} <= keys
    assert any(k.startswith("dropped/") for k in keys) and not [k for k in keys if ".tmp" in k]
    with fs.open_input_stream(path + "/index.html") as f:
        page = f.read().decode()
    assert "s3://cider/text/docs" in page and "plots/funnel.png" in page
    # an s3:// output that holds another dataset is refused in one line, nothing in it changed
    before = digests("s3://cider/text/docs")
    write_dataset("s3://cider/text/other", "documents", table(5))
    rc = main(["text", "--out", "s3://cider/text/other", *args])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "already holds a different dataset" in err and "\n" not in err
    assert len(ShardDataset("s3://cider/text/other")) == 5 and digests("s3://cider/text/docs") == before


def test_crawl_publishes_pages_log_and_warc_to_s3_and_resumes(s3, tmp_path, capsys):
    """`cidermill crawl --out s3://...`: the crawl's state stays in a local work directory; each run
    publishes pages, log (with report), WARC files and state.json; the pages equal a local crawl's;
    --resume fetches no page twice; an s3:// OUT holding another crawl or another dataset is refused."""
    from pipelines.demo_site.server import SITE_FILES, DemoSite
    common = ["--allow-private", "--delay", "0", "--max-depth", "2", "--render", "never", "--no-sitemaps", "--quiet"]
    local, work = str(tmp_path / "local"), str(tmp_path / "work")
    with DemoSite() as site:
        seeds = ["--seeds", site.url + "/"]
        assert main(["crawl", "--out", local, *seeds, "--max-pages", "6", *common]) == 0
        site_paths = len(site.requested_paths())
        remote = ["crawl", "--out", "s3://cider/crawl", "--work-dir", work, *common]
        assert main([*remote, *seeds, "--max-pages", "6", "--write-warc"]) == 0
        assert main([*remote, "--resume", "--max-pages", "10"]) == 0
        fetched = [p for p in site.requested_paths()[site_paths:] if p not in SITE_FILES]
        assert main([*remote, "--seeds", site.url + "/de/", "--max-pages", "2"]) == 1  # another crawl
        write_dataset("s3://cider/crawl-other", "documents", table(3))
        assert main(["crawl", "--out", "s3://cider/crawl-other", "--work-dir", str(tmp_path / "w2"), *seeds,
                     "--max-pages", "2", *common]) == 1
        assert main(["crawl", "--out", local, "--work-dir", work, *seeds, *common]) == 1  # local OUT: no work dir
    err = capsys.readouterr().err
    assert "holds a different crawl" in err and "not empty and holds no crawl" in err and "--work-dir is for" in err
    assert len(fetched) == len(set(fetched)) == 10              # 6, then 4 more on resume; none twice
    pages = ShardDataset("s3://cider/crawl/pages")
    assert 8 <= len(pages) <= 10 and verify_dataset("s3://cider/crawl/pages") == []  # 404s are logged, not pages
    assert verify_dataset("s3://cider/crawl/log") == [] and len(ShardDataset("s3://cider/crawl/log")) >= 10
    assert main(["shards", "verify", "s3://cider/crawl/pages"]) == 0
    mine = {r["url"]: r["text"] for r in ShardDataset(local + "/pages").iter_rows(["url", "text"])}
    theirs = {r["url"]: r["text"] for r in pages.iter_rows(["url", "text"])}
    assert len(mine) >= 5 and all(theirs[u] == t for u, t in mine.items())  # the first run's pages, same text
    fs, path = pafs.FileSystem.from_uri("s3://cider/crawl")
    keys = {i.path[len(path) + 1:] for i in fs.get_file_info(pafs.FileSelector(path, recursive=True))}
    assert "state.json" in keys and "pages/_report/stats.json" in keys and "log/_manifest.json" in keys
    assert any(k.startswith("warc/wave-") for k in keys) and not [k for k in keys if ".tmp" in k or "waves/" in k]
    assert len(ShardDataset("s3://cider/crawl-other")) == 3     # untouched
    assert os.path.isdir(os.path.join(work, "waves"))
    for name in ("pages", "log"):  # the store holds the bytes of the work directory's finished datasets
        assert digests(f"s3://cider/crawl/{name}") == digests(os.path.join(work, name))
    # the WARC a crawl wrote, imported into the store (`crawl --warc`)
    warc = os.path.join(work, "warc", sorted(os.listdir(os.path.join(work, "warc")))[0])
    assert main(["crawl", "--warc", warc, "--out", "s3://cider/from-warc", "--quiet"]) == 0
    assert verify_dataset("s3://cider/from-warc/pages") == []
    from crawl.warc import iter_warc_pages
    assert {r["url"] for r in ShardDataset("s3://cider/from-warc/pages").iter_rows(["url"])} == \
        {r["url"] for r in iter_warc_pages(warc)}


def test_crawl_chunk_checkpoints_round_trip_through_s3(s3, tmp_path):
    """A wave's chunk checkpoints in an s3:// folder (where Dask workers on other machines write them):
    the same bytes as on disk, read back as written; no marker, a damaged marker or a damaged file
    means the chunk is fetched again; nothing is left under a temporary key."""
    from crawl.checkpoint import chunk_key, load_chunk, save_chunk
    from crawl.crawler import link_row
    rows = {"pages": [{"id": "p1", "url": "http://a.test/", "status": 200, "text": "hello", "headers": [],
                       "outlinks": [{"url": "http://a.test/b", "anchor": "b"}]}],
            "log": [{"id": "l1", "url": "http://a.test/", "decision": "fetched", "fetch_ms": 3.5, "wave": 2}],
            "links": [link_row("http://a.test/b", 1, "http://a.test/", "html")]}
    d, local = "s3://cider/ckpt/partial", str(tmp_path / "partial")
    key = chunk_key(2, [{"url": "http://a.test/"}])
    assert load_chunk(d, key) is None                       # nothing there yet
    save_chunk(d, key, rows)
    save_chunk(local, key, rows)
    back = load_chunk(d, key)
    assert back is not None and back == load_chunk(local, key)
    assert back["pages"][0]["text"] == "hello" and back["links"] == rows["links"] and back["log"][0]["fetch_ms"] == 3.5
    for name in sorted(os.listdir(local)):                  # the bytes a local wave writes, key by key
        assert objectstore.read_bytes(f"{d}/{name}") == (tmp_path / "partial" / name).read_bytes()
    assert not [k for k in objectstore.listdir(d) if ".tmp" in k]

    objectstore.write_bytes(f"{d}/{key}.pages.arrow", objectstore.read_bytes(f"{d}/{key}.pages.arrow")[:-40])
    assert load_chunk(d, key) is None                       # a truncated file: fetched again
    save_chunk(d, key, rows)
    objectstore.write_bytes(f"{d}/{key}.ok", b"o")
    assert load_chunk(d, key) is None                       # a damaged marker
    save_chunk(d, key, rows)
    objectstore.remove(f"{d}/{key}.ok")
    assert load_chunk(d, key) is None                       # no marker: the chunk never finished
    save_chunk(d, key, rows)
    assert load_chunk(d, key) == back


def test_crawl_into_s3_on_dask_workers_that_do_not_see_the_work_dir(s3, tmp_path, capsys):
    """`cidermill crawl --out s3://... --runner dask` on workers that share no disk with the driver (their
    own mount namespace, where the --work-dir's folder is an empty tmpfs, as on another machine): the
    workers write each wave to OUT/_work/ in the store, the driver copies it down; the published pages
    are a local in-process crawl's, and OUT/_work is gone at the end."""
    from pipelines.demo_site.server import DemoSite
    from tests_dask import can_hide, start_cluster
    if not can_hide():
        pytest.skip("this machine does not allow a private mount namespace (unshare -m)")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    common = ["--allow-private", "--delay", "0", "--max-depth", "2", "--render", "never", "--no-sitemaps", "--quiet",
              "--max-pages", "8"]
    local, work = str(tmp_path / "local"), str(hidden / "work")
    with DemoSite() as site:
        seeds = ["--seeds", site.url + "/"]
        assert main(["crawl", "--out", local, *seeds, *common]) == 0
        with start_cluster(str(tmp_path), nworkers=2, hide=str(hidden)) as address:
            rc = main(["crawl", "--out", "s3://cider/dask-crawl", "--work-dir", work, *seeds, *common, "--runner",
                       "dask", f"--dask_client_address={address}", "--dask_npartitions=2"])
    assert rc == 0, capsys.readouterr().err
    mine = {r["url"]: r["text"] for r in ShardDataset(local + "/pages").iter_rows(["url", "text"])}
    theirs = {r["url"]: r["text"] for r in ShardDataset("s3://cider/dask-crawl/pages").iter_rows(["url", "text"])}
    assert len(mine) >= 5 and theirs == mine
    assert verify_dataset("s3://cider/dask-crawl/pages") == [] and verify_dataset("s3://cider/dask-crawl/log") == []
    assert os.listdir(os.path.join(work, "waves"))          # the driver's state: local
    assert "_work" not in objectstore.listdir("s3://cider/dask-crawl")


def test_crawl_into_s3_keeps_an_interrupted_waves_chunks_in_the_store(s3, tmp_path, monkeypatch):
    """A wave's chunk checkpoints live in OUT/_work/ in the store: a crash leaves them (and only the
    interrupted wave's: a DONE wave's store copy is gone); a rerun that starts over clears them and
    fetches again; --resume redoes the wave from them without fetching a page twice."""
    from pipelines import crawl_pipeline
    from pipelines.crawl_pipeline import run_crawl
    from pipelines.demo_site.server import DemoSite
    real = crawl_pipeline.CrawlDriver._finish_wave

    def crash_in_wave_1(self, d, entries, t0):
        if self.wave == 1:
            raise RuntimeError("simulated crash after wave 1 fetched its pages")
        return real(self, d, entries, t0)

    out, waves = "s3://cider/chunks", "s3://cider/chunks/_work/waves"
    kw = dict(allow_private=True, delay=0, max_pages=9, max_depth=1, render="never", sitemaps=False, chunk_size=2,
              progress=False, work_dir=str(tmp_path / "work"))
    with DemoSite() as site:
        def fetched():
            return site.page_paths()
        monkeypatch.setattr(crawl_pipeline.CrawlDriver, "_finish_wave", crash_in_wave_1)
        for resume in (False, False):  # a crash; then a rerun that starts over, and the same crash
            n = len(fetched())
            with pytest.raises(RuntimeError):
                run_crawl([site.url + "/"], out, resume=resume, **kw)
            assert len(fetched()) - n == 9  # all fetched again: the stale chunks were not reused
            assert objectstore.listdir(waves) == ["00001"] and objectstore.listdir(waves + "/00001/partial")
        before = fetched()
        monkeypatch.setattr(crawl_pipeline.CrawlDriver, "_finish_wave", real)
        pages_dir, summary = run_crawl([site.url + "/"], out, resume=True, **kw)
        assert fetched() == before  # the redone wave fetched nothing again
    assert pages_dir == out + "/pages" and len(ShardDataset(pages_dir)) == summary["pages"] >= 7
    assert "_work" not in objectstore.listdir(out) and "state.json" in objectstore.listdir(out)
