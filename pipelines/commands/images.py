"""`cidermill images`: image-text pairs and interleaved documents from crawled pages (Beam)."""
from __future__ import annotations

import argparse

from crawl.identity import BOT_TOKEN

HELP = "build image-text pairs and interleaved documents from a pages dataset (fetch, check, dedup, CLIP filter)"
DESCRIPTION = (
    "Read a PAGES dataset (from `cidermill crawl`), fetch every referenced image through the crawler's rules "
    "(robots.txt, opt-out token, per-host politeness, no private addresses unless --allow-private), validate "
    "and re-encode it with Pillow, make (image, alt text) and (image, figcaption) pairs, drop junk texts and "
    "duplicate images, score every pair with an open_clip model and keep those above the CLIP cut. Writes "
    "OUT/pairs and OUT/interleaved, each with a _report/ (stats, dropped samples, CLIP histogram, contact "
    "sheets). Real pretrained model: --clip-model ViT-B-32 --clip-checkpoint open_clip_pytorch_model.bin "
    "(any local open_clip checkpoint; loaded weights-only). Default: the demo tiny model, trained on first use "
    "and cached under ~/.cache/cidermill/clip. Pages imported from WARC (`cidermill crawl --warc`): pass the "
    "same files as --warc and the images are read from them instead of fetched.")
BEAM = True
# not preloaded for its local Dask workers: its module imports torch (2.9 CPU-s and 600 MB in the
# forkserver process, counted on top of the workers' memory); each worker imports it as before
WORKER_MODULES: tuple = ()


def _threshold(s: str):
    if s == "auto":
        return s
    if s.lower() == "none":
        return None
    return float(s)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", required=True, metavar="DIR", help="PAGES dataset (crawl output)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (gets pairs/ and interleaved/)")
    g = p.add_argument_group("CLIP")
    g.add_argument("--clip-checkpoint", metavar="PATH", help="local open_clip checkpoint (.safetensors/.pt/.bin)")
    g.add_argument("--clip-model", metavar="NAME", help="open_clip architecture, e.g. ViT-B-32 (not needed for "
                   "cidermill checkpoints)")
    g.add_argument("--clip-random-init", action="store_true", help="allow --clip-model without a checkpoint "
                   "(random weights: benchmarks only)")
    g.add_argument("--clip-threshold", type=_threshold, default="auto", help="keep pairs with cosine >= X; "
                   "'auto' (default): the threshold calibrated by train-clip, else 0.28; 'none': no threshold")
    g.add_argument("--clip-top-percent", type=float, default=None, help="keep only the best P%% of pairs "
                   "(DataComp-style, global)")
    g.add_argument("--interleaved-threshold", type=_threshold, default=0.1,
                   help="an interleaved image stays if CLIP(image, surrounding text) >= X (default 0.1; 'none')")
    g.add_argument("--clip-batch-size", type=int, default=64)
    g.add_argument("--clip-threads", type=int, default=None, help="torch threads per worker")
    i = p.add_argument_group("image checks")
    i.add_argument("--min-side", type=int, default=32)
    i.add_argument("--max-side", type=int, default=12000)
    i.add_argument("--max-pixels", type=int, default=40_000_000, help="decompression-bomb cap (header check)")
    i.add_argument("--max-aspect", type=float, default=4.0)
    i.add_argument("--max-bytes", type=int, default=20 * 1024 * 1024)
    i.add_argument("--out-max-side", type=int, default=512, help="re-encode to this longer side")
    i.add_argument("--out-format", choices=["JPEG", "PNG", "WEBP"], default="JPEG")
    i.add_argument("--svg", choices=["drop", "rasterize"], default="rasterize",
                   help="SVG: rasterize with cairosvg (default; no entities, no external resources) or drop")
    i.add_argument("--animated", choices=["first_frame", "drop"], default="drop",
                   help="animated GIF/WEBP: drop (default) or keep the first frame")
    i.add_argument("--near-dup-distance", type=int, default=4, help="pHash Hamming bits (-1: exact dedup only)")
    t = p.add_argument_group("text checks")
    t.add_argument("--languages", default=None, help="comma-separated languages to keep (default: all)")
    t.add_argument("--no-captions", action="store_true", help="only alt-text pairs, no figcaption pairs")
    t.add_argument("--no-pii", action="store_true", help="do not scrub PII in pair texts")
    t.add_argument("--max-alt-chars", type=int, default=500)
    f = p.add_argument_group("fetching")
    o = p.add_argument_group("text-rich images (OCR)")
    o.add_argument("--ocr", action="store_true", help="OCR every image that passed its checks (tesseract, model "
                   "picked by the page's language); a text-rich one gets its text in the ocr_text column, every one "
                   "its ocr_score and ocr_chars beside clip_score. Off by default: OCR costs far more than the rest")
    o.add_argument("--ocr-min-chars", type=int, default=None, metavar="N",
                   help="confidently read characters for an image to be text-rich (default: the threshold set on "
                        "dev images by bench/ocr_text_rich.py); e.g. --ocr --ocr-min-chars 60")
    o.add_argument("--ocr-timeout", type=float, default=10.0, help="seconds of OCR per image (default 10)")
    f.add_argument("--warc", nargs="+", metavar="FILE", default=None,
                   help="read images from these WARC files (records matched to the pages' <img src> by canonical "
                        "URL) instead of fetching them, e.g. the files the pages were imported from")
    f.add_argument("--warc-missing", choices=["drop", "fetch"], default="drop",
                   help="with --warc: images not archived there are dropped (image_not_in_warc) or fetched live")
    f.add_argument("--local-images", nargs="+", metavar="URL=DIR", default=None,
                   help="read the images whose src starts with URL from the folder DIR instead of fetching them "
                        "(pages imported with `crawl --html-dir DIR --base-url URL`); nothing outside DIR is read")
    f.add_argument("--allow-private", action="store_true", help="allow private/loopback addresses (demo, tests)")
    f.add_argument("--no-tdm-file", action="store_true",
                   help="do not read each image host's /.well-known/tdmrep.json (W3C TDMRep: a site-wide "
                        "reservation that marks the images it covers not for training)")
    f.add_argument("--delay", type=float, default=1.0, help="seconds between requests to one host")
    f.add_argument("--fetch-timeout", type=float, default=20.0, help="wall-clock cap per image download")
    f.add_argument("--user-agent", default=BOT_TOKEN, help="robots.txt product token")
    p.add_argument("--overwrite", action="store_true", help="replace different datasets in --out")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpus.errors import ConfigError
    from filters.alt_text import AltTextConfig
    from filters.clip_select import ClipSelectConfig
    from filters.image_check import ImageCheckConfig
    from crawl.image_fetch import ImageFetchConfig
    from imagetext.config import ImagesConfig
    from pipelines.images_pipeline import run_images
    from training.clip.default_checkpoint import default_clip_checkpoint

    if args.clip_model and not args.clip_checkpoint and not args.clip_random_init:
        raise ConfigError("--clip-model without --clip-checkpoint would score with random weights; pass "
                          "--clip-checkpoint PATH, or --clip-random-init for a benchmark")
    from filters.ocr import available as ocr_available
    if args.ocr and not ocr_available():
        raise ConfigError("--ocr needs tesseract (make system-deps)")
    if args.clip_batch_size < 1:
        raise ConfigError("--clip-batch-size must be >= 1")
    ckpt = args.clip_checkpoint
    if ckpt is None and not args.clip_model:
        ckpt = default_clip_checkpoint(synth_caption_pairs, log=lambda m: print(m, flush=True))
    cfg = ImagesConfig(
        image=ImageCheckConfig(max_bytes=args.max_bytes, max_pixels=args.max_pixels, min_side=args.min_side,
                               max_side=args.max_side, max_aspect=args.max_aspect, out_max_side=args.out_max_side,
                               out_format=args.out_format, svg=args.svg, animated=args.animated),
        alt=AltTextConfig(max_chars=args.max_alt_chars),
        fetch=ImageFetchConfig(user_agent=args.user_agent, allow_private=args.allow_private, delay=args.delay,
                               total_timeout=args.fetch_timeout, max_bytes=args.max_bytes,
                               tdm_file=not args.no_tdm_file),
        clip=ClipSelectConfig(args.clip_threshold, args.clip_top_percent),
        clip_model=args.clip_model, clip_checkpoint=ckpt, clip_batch_size=args.clip_batch_size,
        clip_threads=args.clip_threads, interleaved_threshold=args.interleaved_threshold,
        near_dup_distance=args.near_dup_distance,
        languages=tuple(x.strip() for x in args.languages.split(",") if x.strip()) if args.languages else None,
        pii=not args.no_pii, captions=not args.no_captions,
        warc_files=tuple(args.warc) if args.warc else None, warc_missing=args.warc_missing,
        local_images=_local_images(args.local_images), ocr=_ocr_config(args))
    print(f"images: {args.pages} -> {args.out} (CLIP {args.clip_model or 'from checkpoint'}"
          f"{', ' + ckpt if ckpt else ', random init'})", flush=True)
    s = run_images(args.pages, args.out, config=cfg, beam_args=beam_args, overwrite=args.overwrite)
    dropped = ", ".join(f"{k}={v}" for k, v in sorted(s["dropped"].items(), key=lambda kv: (-kv[1], kv[0])))
    cut = s["clip_cut"]
    print(f"images: {s['pairs']} pairs, {s['kept']} kept (CLIP cut {cut:.3f}); dropped: {dropped or 'none'}"
          if cut is not None else f"images: {s['pairs']} pairs, {s['kept']} kept; dropped: {dropped or 'none'}")
    print(f"images: {s['documents']} interleaved documents in {s['interleaved_dir']}; pairs in {s['pairs_dir']}; "
          f"reports in */_report/ (render with `cidermill report DIR`)")
    return 0


def synth_caption_pairs(out_dir: str, n: int, seed: int) -> None:
    """The default CLIP scorer's training pairs: synthetic captioned scenes (`cidermill synth
    captions`), or colored-shape pairs where synth cannot run (its imports missing)."""
    try:
        from pipelines.synth_pipeline import run_synth
    except ImportError:
        from training.clip.toy_pairs import write_toy_pairs
        write_toy_pairs(out_dir, n, seed=seed, overwrite=True)
        return
    run_synth("captions", n, out_dir, seed, None, engine="local", workers=1, overwrite=True,
              progress=False, contact_sheets=False, width=128, height=128)


def _ocr_config(args):
    from corpus.errors import ConfigError
    from filters.ocr_text_rich import TextRichConfig
    if not args.ocr:
        return None
    if (args.ocr_min_chars is not None and args.ocr_min_chars < 0) or args.ocr_timeout <= 0:
        raise ConfigError("--ocr-min-chars must be >= 0 and --ocr-timeout > 0")
    d = TextRichConfig()
    return TextRichConfig(min_chars=d.min_chars if args.ocr_min_chars is None else args.ocr_min_chars,
                          min_word_confidence=d.min_word_confidence, timeout_s=args.ocr_timeout)


def _local_images(specs):
    """--local-images URL=DIR ... -> ((prefix, folder), ...), or None; a ConfigError for a bad one."""
    if not specs:
        return None
    from corpus.errors import ConfigError
    from imagetext.local_images import parse_local_images
    try:
        return parse_local_images(specs)
    except ValueError as e:
        raise ConfigError(str(e)) from None
