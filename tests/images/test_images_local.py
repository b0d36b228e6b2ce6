"""A saved site's images read from its folder: `cidermill crawl --html-dir DIR --base-url URL` imports
the pages, `cidermill images --local-images URL=DIR` reads their images from DIR (the URL's host
does not even resolve, so nothing can be fetched), and never a file outside DIR."""
from __future__ import annotations

import os
import shutil

import pytest

from corpus.reader import ShardDataset

BASE = "http://docs.local.invalid/manual/"
GOOD = ["good0.png", "good1.png", "good2.png", "captioned.png"]


def _page(srcs: list[str]) -> str:
    parts = "".join(f"<p>Paragraph {j} of this manual page explains the garden tools and the picture that follows "
                    f"it, with enough words to count as main content.</p><img src=\"{s}\" alt=\"Picture {j} of the "
                    f"garden tools\">" for j, s in enumerate(srcs))
    return (f"<html><head><title>Garden tools</title></head><body><article><h1>Garden tools</h1>{parts}"
            f"<p>The end of the manual page about the garden tools.</p></article></body></html>")


@pytest.mark.slow
def test_images_of_a_saved_site_are_read_from_its_folder_and_only_from_there(image_site, tiny_clip, tmp_path):
    from filters.image_check import check_image
    from pipelines.cli import main

    _, _, root = image_site
    site = tmp_path / "site"
    (site / "img").mkdir(parents=True)
    for n in GOOD + ["truncated.png"]:
        shutil.copy(os.path.join(root, n), site / "img" / n)
    secret = tmp_path / "secret.png"                       # outside the folder
    shutil.copy(os.path.join(root, "good3.png"), secret)
    os.symlink(secret, site / "img" / "link.png")           # a link inside that points out
    srcs = [f"img/{n}" for n in GOOD] + ["img/truncated.png", "img/missing.png", "img/link.png",
                                         "img/..%2f..%2fsecret.png"]
    (site / "tools.html").write_text(_page(srcs), encoding="utf-8")
    assert main(["crawl", "--html-dir", str(site), "--base-url", BASE, "--out", str(tmp_path / "crawl")]) == 0
    pages = str(tmp_path / "crawl" / "pages")
    out = str(tmp_path / "out")
    assert main(["images", "--pages", pages, "--out", out, "--clip-checkpoint", tiny_clip[0],
                 "--local-images", f"{BASE}={site}", "--clip-batch-size", "8", "--clip-threads", "1"]) == 0
    by = {r["image_url"].rsplit("/", 1)[1]: r for r in ShardDataset(os.path.join(out, "pairs")).iter_rows()
          if r["text_source"] == "alt"}
    for n in GOOD:
        assert by[n]["sha256"] == check_image(open(site / "img" / n, "rb").read()).sha256, n
        assert by[n]["drop_reason"] in (None, "clip_low_score"), (n, by[n]["drop_reason"])
    assert by["truncated.png"]["drop_reason"] == "image_truncated"
    assert by["missing.png"]["drop_reason"] == "image_not_in_folder"
    assert by["link.png"]["drop_reason"] == "image_outside_folder"
    escaped = [r for k, r in by.items() if "secret" in k]
    assert escaped and all(r["drop_reason"] in ("image_outside_folder", "image_not_in_folder") for r in escaped)
    assert not any((r["drop_reason"] or "").startswith("fetch_") for r in by.values())   # nothing fetched


@pytest.mark.slow
def test_a_dask_worker_that_does_not_see_the_folder_is_refused(image_site, tiny_clip, tmp_path, capsys):
    """On Dask, a worker that sees another disk at the --local-images folder (its own mount
    namespace, where the folder is an empty tmpfs, as on another machine) would drop every image
    as image_not_in_folder: refused in one line before any work."""
    from pipelines.cli import main
    from tests_dask import can_hide, start_cluster
    if not can_hide():
        pytest.skip("this machine does not allow a private mount namespace (unshare -m)")
    _, _, root = image_site
    site = tmp_path / "hidden" / "site"
    (site / "img").mkdir(parents=True)
    shutil.copy(os.path.join(root, GOOD[0]), site / "img" / GOOD[0])
    (site / "tools.html").write_text(_page([f"img/{GOOD[0]}"]), encoding="utf-8")
    assert main(["crawl", "--html-dir", str(site), "--base-url", BASE, "--out", str(tmp_path / "crawl")]) == 0
    out = tmp_path / "out"
    with start_cluster(str(tmp_path), nworkers=1, hide=str(tmp_path / "hidden")) as address:
        rc = main(["images", "--pages", str(tmp_path / "crawl" / "pages"), "--out", str(out),
                   "--clip-checkpoint", tiny_clip[0], "--local-images", f"{BASE}={site}",
                   "--runner", "dask", f"--dask_client_address={address}"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "does not see" in err and str(site) in err and "\n" not in err
    assert not os.path.exists(out / "pairs" / "_manifest.json")


def test_local_images_specs_and_paths(tmp_path):
    from imagetext.config import ImagesConfig
    from imagetext.local_images import local_info, local_root, parse_local_images

    (tmp_path / "a").mkdir()
    roots = parse_local_images([f"https://example.org/docs={tmp_path / 'a'}", f"https://example.org/={tmp_path}"])
    assert roots[0] == ("https://example.org/docs/", os.path.realpath(tmp_path / "a"))
    assert local_root("https://example.org/docs/x.png", roots) == roots[0]          # the longest prefix wins
    assert local_root("https://example.org/y.png", roots) == roots[1]
    assert local_root("https://other.org/docs/x.png", roots) is None
    for bad in ("https://example.org/docs", f"ftp://example.org/={tmp_path}", f"https://example.org/={tmp_path / 'no'}"):
        with pytest.raises(ValueError):
            parse_local_images([bad])
    cfg = ImagesConfig()
    prefix, folder = roots[0]
    assert local_info(prefix + "../b.png", prefix, folder, cfg)["reason"] == "image_outside_folder"
    assert local_info(prefix + "%2e%2e/b.png", prefix, folder, cfg)["reason"] == "image_outside_folder"
    assert local_info(prefix + "c.png?v=1", prefix, folder, cfg)["reason"] == "image_not_in_folder"
