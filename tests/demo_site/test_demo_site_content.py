"""The committed site matches its generator and its ground truth: sizes, languages, snippets in
the static HTML, JS-only text absent from it, images as labelled, PII labels consistent."""
from __future__ import annotations

import html
import json
import re
from io import BytesIO
from pathlib import Path

from PIL import Image

from crawl.extract import parse_html
from crawl.visibility import visible_text
from pipelines.demo_site import GROUND_TRUTH_PATH, SITE_DIR, html_pages, load_ground_truth
from pipelines.demo_site.build.generate import file_for, generate
from pipelines.demo_site.build.text_cases import iban_ok, luhn_ok, ssn_ok

GT = load_ground_truth()


def _files(root: Path) -> dict[str, bytes]:
    return {f.relative_to(root).as_posix(): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()}


def _comparable_gt(text: str) -> dict:
    """The ground truth without image byte counts (encoder versions may differ across machines)."""
    gt = json.loads(text)
    for e in gt["paths"].values():
        if e["kind"] == "image":
            e.pop("bytes", None)
    return gt


def test_committed_site_is_what_the_generator_makes(tmp_path):
    """Text files byte for byte; images by name (Pillow/zlib versions may encode differently)."""
    generate(tmp_path / "site", tmp_path / "gt.json")
    fresh, committed = _files(tmp_path / "site"), _files(SITE_DIR)
    assert sorted(fresh) == sorted(committed), "run: python -m pipelines.demo_site.build"
    binary = (".png", ".jpg", ".gif")
    stale = [n for n in fresh if not n.endswith(binary) and fresh[n] != committed[n]]
    assert not stale, f"stale files {stale}: run python -m pipelines.demo_site.build"
    assert _comparable_gt((tmp_path / "gt.json").read_text()) == _comparable_gt(GROUND_TRUTH_PATH.read_text())


def test_size_languages_and_page_count():
    files = _files(SITE_DIR)
    assert sum(len(b) for b in files.values()) < 3 * 1024 * 1024
    for name, data in files.items():
        if name.startswith("img/"):
            assert len(data) < 10 * 1024, name
    pages = html_pages(GT)
    assert 60 <= len(pages) <= 150
    langs = {e["lang"] for e in html_pages(GT, quality="good").values() if "prose" in e["categories"]}
    assert {"en", "fr", "de", "es", "ja", "zh"} <= langs


def _visible_text(raw: str) -> str:
    raw = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", raw)
    raw = re.sub(r"(?s)<[^>]+>", " ", raw)
    return re.sub(r"\s+", " ", html.unescape(raw))


def test_snippets_are_in_the_static_html_and_js_snippets_are_not():
    for path, e in html_pages(GT).items():
        if e["dynamic"] or e["status"] != 200:
            continue
        f = file_for(path, SITE_DIR)
        raw = f.read_bytes().decode(e["encoding"] or "utf-8", errors="replace")
        text = _visible_text(raw)
        for s in e["expected_snippets"]:
            assert re.sub(r"\s+", " ", s) in text, (path, s)
        for s in e["js_only_snippets"]:
            if e.get("hidden_store"):  # a JS wiki holds its text in a hidden store: in the file, never visible
                assert s in raw and s not in visible_text(parse_html(raw)), (path, s)
            else:
                assert s not in raw and s[:40] not in raw, (path, s)
        for s in e["boilerplate_snippets"]:
            assert s in text, (path, s)
        for img in e["images"]:
            assert f'src="{img["src"]}"' in raw
            if img["alt"] is None:
                assert not re.search(r'<img src="%s" alt=' % re.escape(img["src"]), raw)


def test_every_category_the_other_stages_need_is_present():
    cats = {c for e in GT["paths"].values() for c in e.get("categories", [])}
    need = {"js_rendered", "lazy_loaded", "images", "mismatched_alt", "bad_images", "svg", "simple_table",
            "merged_cells", "empty_cells", "near_duplicate", "exact_duplicate", "pii", "people_directory",
            "version_strings", "boilerplate_only", "keyword_stuffing", "repeated_lines", "lorem_ipsum",
            "profanity", "eval_contamination", "robots_disallowed", "training_opt_out", "meta_noindex",
            "meta_nofollow", "meta_none", "x_robots_tag_noindex", "redirect_chain", "redirect_loop",
            "not_found", "slow", "spider_trap", "legacy_encoding", "login_form", "malformed_html",
            "binary_as_html", "huge", "invalid_links", "non_html_link", "sitemap_only"}
    assert need <= cats, need - cats
    bads = {e.get("bad") for e in GT["paths"].values() if e["kind"] == "image"}
    assert {"corrupt", "truncated", "empty", "not_an_image", "animated", "decompression_bomb", "missing"} <= bads
    assert len(GT["near_duplicate_groups"]) >= 3 and len(GT["exact_duplicate_groups"]) >= 1
    for g in GT["near_duplicate_groups"].values():
        assert len(g["members"]) >= 3 and all(m["jaccard_to_first"] >= 0.5 for m in g["members"])


def test_good_images_decode_to_their_labelled_size_and_bad_ones_do_not():
    for path, e in GT["paths"].items():
        if e["kind"] != "image" or e.get("dynamic") or e["status"] != 200 or e["format"] == "svg":
            continue
        data = (SITE_DIR / path.lstrip("/")).read_bytes()
        ok = True
        try:
            with Image.open(BytesIO(data)) as im:
                im.load()
                size, frames = im.size, getattr(im, "n_frames", 1)
        except Exception:  # noqa: BLE001
            ok = False
        if e["bad"] in ("corrupt", "truncated", "empty", "not_an_image"):
            assert not ok, path
        else:
            assert ok and size == (e["width"], e["height"]) and frames == e["frames"], path


def test_pii_labels_are_valid_and_present():
    for path, e in html_pages(GT, categories="pii").items():
        text = e["main_text"] + " " + " ".join(str(v) for v in e.get("pii", {}).values())
        raw = (SITE_DIR / path.lstrip("/")).read_text()
        for kind, values in e["pii"].items():
            for v in values:
                assert html.escape(v, quote=False) in raw, (path, kind, v)
            if kind == "credit_card":
                assert all(luhn_ok(v) for v in values)
            if kind == "credit_card_invalid":
                assert not any(luhn_ok(v) for v in values)
            if kind == "iban":
                assert all(iban_ok(v) for v in values)
            if kind == "ssn":
                assert all(ssn_ok(v) for v in values)
        assert text
    kinds = {k for e in html_pages(GT, categories="pii").values() for k in e["pii"]}
    assert {"email", "phone", "ipv4", "ipv6", "credit_card", "credit_card_invalid", "ssn", "iban"} <= kinds
    ep = GT["eval_passages"][0]
    hits = [p for p, e in GT["paths"].items() if ep["id"] in e.get("eval_passages", [])]
    assert len(hits) >= 2
