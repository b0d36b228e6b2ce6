"""The images stage writes the same bytes as the pipeline it replaced.

`pipelines/images_pipeline.py` was rebuilt from one 140-line function into composite PTransforms
over library modules (issue 18). This test runs every case of the test site (bad files, junk alt
texts, exact and near duplicates, a mismatched caption, an opted-out page, figure captions) through
`cidermill images --warc` (the archived host never resolves, so no port enters a URL or an id) and
compares every shard and report file with digests recorded from the old pipeline, commit 32785ed.

Paths of the run's temporary directory (in the report's config) are replaced by `<tmp>` first, JSON
files are compared with sorted keys (the order of stages in stats.json follows arrival order), and
the manifests (their provenance names the inputs' paths) are left out. The digests hold for this
project's pinned torch, Pillow and matplotlib on x86-64: an upgrade that moves a CLIP float or a
plot pixel changes the output, and re-recording them (CIDERMILL_PRINT_GOLDEN=1 prints the new
ones) must be a reviewed decision, never a way to make the test pass.
"""
from __future__ import annotations

import hashlib
import io
import json
import os

import pytest

from images_site import write_pages

pytestmark = pytest.mark.slow

BASE = "http://golden.archive.invalid"

# relative path -> sha256, recorded from the old pipeline (see the module docstring)
GOLDEN = {
    'interleaved/_report/stats.json': '355f855c81b5a1065e28e1131ebd20f0dc73be8cd8274e9e8c5aad60c63ed976',  # config.fetch.agent_string: the crawler's one identity (crawl/identity.py)
    'interleaved/part-00000.arrow': 'e6031f2813defbc5ab8c6893300ce85c492ee5ca969d0a1553b37c14765b82b7',
    'pairs/_report/dropped/alt_empty.jsonl': 'c292519148573442cf0bb4d96adf2eaffabc2dfdf5c0cc130d1d14cbce7087d3',
    'pairs/_report/dropped/alt_filename.jsonl': 'f616d13fbcc39be3b7b05b94328382c5ed713956a307f4a4b43e12c6ca1bd981',
    'pairs/_report/dropped/alt_url.jsonl': 'f669265329a7e0f9870eb0e3f29fbaa69a52ee4e7e8a5d8128dfa1ceff940ad9',
    'pairs/_report/dropped/clip_low_score.jsonl': 'c928f2a0770194765d6ebf28c417d3233d85940c218e89eb078e3b9b6646c515',
    'pairs/_report/dropped/duplicate_image_exact.jsonl': 'f5401b9eb76cb891c130d4a94fa0828d5342269ff7e0b3de3e2b16b53fb34a26',
    'pairs/_report/dropped/duplicate_image_near.jsonl': 'd96b66e27bd720b033b85c52a29de8f5d77ff04f445db927104b222b57d78c68',
    'pairs/_report/dropped/image_animated.jsonl': '2a4eb938539e0cc56a6b78d7c72612f29d2847c7e4341fca04dd87d37e198274',
    'pairs/_report/dropped/image_bad_aspect_ratio.jsonl': '7e0b63637be6095b472f4c46e4ba6755a4e21de0bb33caca9a44fb9d0d9ad714',
    'pairs/_report/dropped/image_corrupt.jsonl': 'e36a35fac35af5949986eef0192d798f941c8e2a765d396cb2e5a2af6c748c6e',
    'pairs/_report/dropped/image_empty.jsonl': '4fa219f9cccffd5f2dcb9a80165ddb2ff611998359d0946e3041e2284ee5155a',
    'pairs/_report/dropped/image_is_html.jsonl': 'd0156e7bdd3004dc5ca1bb2a8e96dd387e305ee8e20b9bd347029f7aad49de94',
    'pairs/_report/dropped/image_not_in_warc.jsonl': '97f6850851835f27b0f488a2b770407be519f2f3eeeb6ad8f482834352129cb9',
    'pairs/_report/dropped/image_too_many_pixels.jsonl': 'f29eb186b9528d4b3270a4e6bbc922dffd2065e20717490a77dedeebab07aa06',
    'pairs/_report/dropped/image_too_small.jsonl': 'e7bcc1a6c6533500e79b78f6b284d09962b557af4044161fd863ebc8afe778ac',
    'pairs/_report/dropped/image_truncated.jsonl': '20e6c6df40485f2390b1573b74242585be60832de0a1d3e0847994f5fd8d161c',
    'pairs/_report/dropped/page_training_optout.jsonl': 'aeb6752ba6a7689837d63c27c0c627aa6095db9bc4daa14c0b4124b1c35696af',
    'pairs/_report/plots/clip_score_hist.png': '482bdf802bc6946572f22a8aafd974c324dbc9902ac0707d141885fcfe143ee6',
    'pairs/_report/plots/sheet_alt_empty.png': 'fd3b1ce0067a3ca7bcc7ddacd8141800cf8baa12fc634129ce90d3acc5faa7c1',
    'pairs/_report/plots/sheet_alt_filename.png': '947d1a89f245f12bad4eab369c1d332ca70a3eaadff0e3f2e543bf1b7d6b4ca9',
    'pairs/_report/plots/sheet_alt_url.png': 'ba9b4262143945f2b0bf58bc337ddb5d762d49e2d4b4ea4f79b67668db6a735e',
    'pairs/_report/plots/sheet_clip_low_score.png': 'ab8fe96c268547d55e1bfcb5857b636457a380fb6dc403a03dec675b68ea118a',
    'pairs/_report/plots/sheet_duplicate_image_exact.png': '5f00d13a3a92b0ff9407fe0f319f3b979741638f9af1f41bd8f9f9b5c7c56a62',
    'pairs/_report/plots/sheet_duplicate_image_near.png': '74e1de789714b2ba1757ac19870053db0d03bdc8db43fb51e4849e5b8f75eff8',
    'pairs/_report/plots/sheet_image_animated.png': '9c8bd14546d7bd23dbb2de823ca76defb9804f3c3e5db4a0303c6f0e892ee0c7',
    'pairs/_report/plots/sheet_image_bad_aspect_ratio.png': '2c6554a807fdda8711bc5db83ab8a290d642d7c32e8cf7d860c5db64c3bb1027',
    'pairs/_report/plots/sheet_image_corrupt.png': '0df17a24ec3385b3f6fedc662ab6f03a03bf06ca3dfa526fde9cfafa01b4d882',
    'pairs/_report/plots/sheet_image_empty.png': '0129cb9d037397dba9a61c94e9fd8914b19e99567a182cca23b538c5bedf10c0',
    'pairs/_report/plots/sheet_image_is_html.png': 'd9c32b36f77d51384c177bd9993fa7dd08c1e2cde4b4f07ee3e790c0373bd0eb',
    'pairs/_report/plots/sheet_image_not_in_warc.png': '22376ceb18a498ce8771141f20c3c92871ceeb0edb02505a74aa4cff49ab0a93',
    'pairs/_report/plots/sheet_image_too_many_pixels.png': 'dd363126ebf3242cc8dc0411bc2e1c2100ca672a8b1e180fc10e35444721e606',
    'pairs/_report/plots/sheet_image_too_small.png': 'a6cff490222d6039165081540caa329aa2b4ff7338702b6f1a0b87eadacbc094',
    'pairs/_report/plots/sheet_image_truncated.png': 'dfd1b7b58d514a8f0187ba6e137ec87d2d4bc438a12620ecf9c879a721da696d',
    'pairs/_report/plots/sheet_kept.png': '4327b43215fe2e8f067646a4fbc9777e22923eb17eb969a5485b23c5a8ecc7d6',
    'pairs/_report/plots/sheet_page_training_optout.png': 'a78a40e8968c02309feb613557f6a45176d9dae1d860288c11138c29061750a2',
    'pairs/_report/stats.json': 'b23e5bf527a9e3e71a69c356ac44a7eb359ed86b51b02d09420e2261eaf169d6',  # likewise
    'pairs/part-00000.arrow': 'f44dd6f5f9633d3ace07ab062dbe9c9e409d738b71757d468aacbf0f662bbffa',
}


def _record(writer, url, body, ctype):
    from warcio.statusandheaders import StatusAndHeaders

    http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                                  warc_headers_dict={"WARC-Date": "2026-01-02T00:00:00Z"}))


def _digests(out: str, tmp: str) -> dict[str, str]:
    found = {}
    for dirpath, _, files in os.walk(out):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, out)
            if name == "_manifest.json":   # its provenance holds the input paths
                continue
            data = open(path, "rb").read()
            if name.endswith((".json", ".jsonl")):
                data = data.replace(tmp.encode(), b"<tmp>")
            if name.endswith(".json"):   # the order of stages in stats.json follows arrival (both pipelines)
                data = json.dumps(json.loads(data), sort_keys=True).encode()
            found[rel] = hashlib.sha256(data).hexdigest()
    return found


def test_images_outputs_are_byte_identical_to_the_old_pipeline(image_site, tiny_clip, tmp_path, tmp_path_factory):
    from warcio.warcwriter import WARCWriter

    from pipelines.cli import main

    _, cases, root = image_site
    warc = str(tmp_path / "images.warc")
    with open(warc, "wb") as f:
        w = WARCWriter(f, gzip=False)
        for name in sorted(os.listdir(root)):   # missing.png is not archived: image_not_in_warc
            ctype = "image/jpeg" if name.endswith(".jpg") else "image/gif" if name.endswith(".gif") else "image/png"
            _record(w, f"{BASE}/{name}", open(os.path.join(root, name), "rb").read(), ctype)
    pages = write_pages(str(tmp_path / "pages"), BASE, cases)
    out = str(tmp_path / "out")
    assert main(["images", "--pages", pages, "--out", out, "--clip-checkpoint", tiny_clip[0], "--warc", warc,
                 "--clip-batch-size", "8", "--clip-threads", "1"]) == 0
    found = _digests(out, str(tmp_path_factory.getbasetemp()))   # the checkpoint's folder is there too
    if os.environ.get("CIDERMILL_PRINT_GOLDEN"):
        print("\n".join(f"    {k!r}: {v!r}," for k, v in sorted(found.items())))
    assert found == GOLDEN
