"""`cidermill crawl`: a polite, robots.txt-respecting crawl (or a WARC import) into a pages dataset."""
from __future__ import annotations

from crawl.identity import BOT_TOKEN, OPTOUT_TOKEN, agent_string

HELP = ("crawl seed URLs (robots.txt, politeness, headless rendering) or import WARC files, mail archives or "
        "saved HTML pages into a pages dataset")
DESCRIPTION = (
    "Crawl the web from --seeds in waves (each wave a Beam pipeline) into OUT/pages (a shard dataset, "
    "schema corpus.schemas.PAGES) and OUT/log (one row per URL decision). robots.txt is honoured for "
    "--user-agent (else *); pages disallowed for --optout-token are kept for links but marked "
    "training_allowed=false, as are pages that reserve themselves from AI training (robots noai, TDMRep "
    "tdm-reservation: 1 in a header, a meta tag or the site's /.well-known/tdmrep.json; noimageai drops a "
    "page's images). Stop any time and continue with --resume. "
    "With --warc FILES, WARC "
    "archives are imported into the same pages dataset instead; with --mbox, mail archives (one row per message); "
    "with --html-dir, a folder of saved pages (one row per file).")
BEAM = True
WORKER_MODULES = ("pipelines.crawl_pipeline",)  # imported once for every local Dask worker (runners/dask_fork.py)


def configure(p):
    p.add_argument("--seeds", nargs="+", metavar="URL", default=[], help="start URLs")
    p.add_argument("--seeds-file", help="file with one seed URL per line")
    p.add_argument("--out", required=True, help="output directory (pages/, log/, waves/, state.json), or "
                   "s3://bucket/prefix: pages/, log/ and state.json are published there at the end of each run")
    p.add_argument("--work-dir", metavar="DIR", help="with an s3:// --out: the local directory of the crawl's "
                   "working state (waves/, state.json; --resume reads it) (default: "
                   "~/.cache/cidermill/crawl/<hash of --out>)")
    p.add_argument("--resume", action="store_true", help="continue the crawl stored in --out")
    p.add_argument("--max-pages", type=int, default=1000, help="pages to fetch in total (default 1000)")
    p.add_argument("--max-pages-per-host", type=int, default=0, help="pages per host (default: no limit)")
    p.add_argument("--max-depth", type=int, default=3, help="link depth from the seeds (default 3)")
    p.add_argument("--wave-size", type=int, default=500, help="URLs per wave (default 500)")
    p.add_argument("--order", choices=["learned", "shape"], default="learned",
                   help="frontier order: learned (default) starts from the URL-shape priority and adds what the "
                        "fetched pages teach per host and path prefix (text-filter pass rate, language, topic "
                        "saturation) and the link's anchor text; shape uses the URL shape alone. Each fetched URL's "
                        "priority and its parts are in OUT/log (priority, priority_parts)")
    p.add_argument("--target-languages", nargs="+", default=["en"], metavar="LANG",
                   help="with --order learned: languages whose pages count as wanted (default en); "
                        "e.g. --target-languages en fr de")
    p.add_argument("--scope", choices=["seeds", "any"], default="seeds",
                   help="follow links only on the seeds' hosts (default) or anywhere")
    p.add_argument("--include", action="append", default=[], metavar="REGEX", help="only crawl URLs matching")
    p.add_argument("--exclude", action="append", default=[], metavar="REGEX", help="never crawl URLs matching")
    p.add_argument("--render", choices=["auto", "always", "never"], default="auto",
                   help="headless Chromium rendering: auto renders app shells, pages with little visible static "
                        "text, and pages whose text is mostly held in scripts or hidden stores")
    p.add_argument("--browsers", type=int, default=1, help="headless browsers per worker process (default 1)")
    p.add_argument("--pages-per-browser", type=int, default=4,
                   help="pages rendering at once in one browser, each in its own context (default 4)")
    p.add_argument("--context-reuse", type=int, default=1, metavar="N",
                   help="let one browser context render up to N pages of the same host, wiped between pages "
                        "(cookies, storage, session storage); less browser CPU per page than a fresh context each "
                        "(bench/crawl.py measures it) (default 1: a fresh context per page)")
    p.add_argument("--allow-private", action="store_true",
                   help="allow addresses that are not globally routable: private, loopback, link-local, carrier-grade "
                        "NAT, 6to4 ... (the demo site, tests)")
    p.add_argument("--user-agent", default=BOT_TOKEN, help=f"robots.txt product token (default {BOT_TOKEN})")
    p.add_argument("--optout-token", default=OPTOUT_TOKEN,
                   help=f"robots.txt token whose Disallow marks pages training_allowed=false (default {OPTOUT_TOKEN})")
    p.add_argument("--delay", type=float, default=1.0, help="seconds between requests to one host (default 1)")
    p.add_argument("--ignore-crawl-delay", action="store_true", help="do not honour robots.txt Crawl-delay")
    p.add_argument("--max-crawl-delay", type=float, default=10.0, help="cap on an honoured Crawl-delay (s)")
    p.add_argument("--extract-workers", type=int, default=0, metavar="N",
                   help="processes extracting main content while pages are fetched (default 0: one per core; "
                        "1: in the crawler's own process); the output is the same for any N")
    p.add_argument("--parallel-hosts", type=int, default=8, help="hosts crawled at once per worker (default 8)")
    p.add_argument("--timeout", type=float, default=10.0, help="read timeout per request in seconds (default 10)")
    p.add_argument("--max-bytes", type=int, default=5 * 1024 * 1024,
                   help="largest page body kept from its static HTML (default 5 MiB); a larger page is skipped "
                        "as too_large unless it is headed for rendering")
    p.add_argument("--render-max-bytes", type=int, default=24 * 1024 * 1024,
                   help="largest page body for a page headed for rendering, e.g. a single-file JavaScript app "
                        "that keeps its content in a hidden store (default 24 MiB; --render never: unused)")
    p.add_argument("--retries", type=int, default=2, help="retries on 5xx/timeouts (default 2)")
    p.add_argument("--no-pdf", action="store_true", help="skip application/pdf responses (by default a fetched PDF's "
                   "text layer becomes a page; encrypted, broken or oversized ones are logged with a pdf:* reason)")
    p.add_argument("--no-plain-text", action="store_true", help="skip text/plain and text/markdown responses (by "
                   "default a text file's body becomes a page's text, lines kept; robots.txt, ads.txt and "
                   "/.well-known/ files are logged plain:machine_file)")
    p.add_argument("--no-sitemaps", action="store_true", help="do not read sitemaps of seed hosts")
    p.add_argument("--no-tdm-file", action="store_true",
                   help="do not read each site's /.well-known/tdmrep.json (W3C TDMRep: a site-wide text-and-data-"
                        "mining reservation that marks the pages it covers training_allowed=false)")
    p.add_argument("--keep-media", action="store_true", help="let the browser load fonts and media")
    _import_arguments(p)
    p.add_argument("--write-warc", action="store_true", help="also write fetched pages as OUT/warc/*.warc.gz")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def _import_arguments(p):
    """What `crawl` reads instead of the web: WARC files, mail archives, saved pages, local PDFs."""
    p.add_argument("--warc", nargs="+", metavar="FILE", help="import these WARC files instead of crawling")
    p.add_argument("--mbox", nargs="+", metavar="PATH", help="import mail archives instead of crawling: mbox "
                   "files (plain or gzip, e.g. Mailman's 2020-March.txt.gz) or folders of one-message files "
                   "(maildir, .eml); one page per message, its own words without quotes, signature or list footer")
    p.add_argument("--mbox-keep-quotes", action="store_true", help="with --mbox: keep quoted lines (> ...)")
    p.add_argument("--html-dir", metavar="DIR", help="import a folder of saved HTML pages instead of crawling "
                   "(a documentation set, a mirror; .html, .htm, .xhtml, .shtml, and .gz of them), one page per file")
    p.add_argument("--base-url", metavar="URL", help="with --html-dir: the URL the folder was served at "
                   "(pages get base URL + path, so their links resolve; default: file:// URLs)")
    p.add_argument("--pdf-dir", metavar="DIR", help="read a local folder of PDF files instead of crawling: "
                   "OUT/pages (text), OUT/pdf_pages (page images), OUT/interleaved; e.g. "
                   "`cidermill crawl --pdf-dir manuals/ --out out/pdf --pdf-dpi 150`")
    p.add_argument("--pdf-dpi", type=float, default=150.0, help="with --pdf-dir: page image resolution (default 150)")
    p.add_argument("--pdf-max-pages", type=int, default=300, help="with --pdf-dir: pages read per PDF; longer "
                   "ones are cut and noted, ones over 5000 pages refused (default 300)")
    p.add_argument("--ocr-lang", default="en", help="with --pdf-dir: OCR language for pages without a text layer "
                   "when language ID finds none in the document (default en)")
    p.add_argument("--workers", type=int, default=1, help="with --pdf-dir: worker processes (default 1)")


def run(args, beam_args) -> int:
    import json

    from corpus.errors import ConfigError
    from crawl.crawler import CrawlConfig
    from crawl.frontier import FrontierConfig
    from pipelines.archive_import import run_html_import, run_mbox_import, run_warc_import
    from pipelines.crawl_pipeline import run_crawl

    if args.pdf_dir:
        from crawl.pdf import PdfLimits
        from pipelines.pdf_import import run_pdf_import
        if not 10 <= args.pdf_dpi <= 600 or args.pdf_max_pages < 1:
            raise ConfigError("--pdf-dpi must be between 10 and 600 and --pdf-max-pages at least 1")
        limits = PdfLimits(dpi=args.pdf_dpi, max_pages=args.pdf_max_pages)
        summary = run_pdf_import(args.pdf_dir, args.out, limits=limits, ocr_lang=args.ocr_lang,
                                 workers=args.workers, progress=not args.quiet)
        print(json.dumps(summary, indent=1))
        return 0
    if args.html_dir:
        pages, summary = run_html_import(args.html_dir, args.out, beam_args, base_url=args.base_url,
                                         user_agent=args.user_agent, progress=not args.quiet)
        print(json.dumps({"pages": pages, **summary}, indent=1))
        return 0
    if args.base_url:
        raise ConfigError("--base-url goes with --html-dir")
    if args.mbox:
        pages, summary = run_mbox_import(args.mbox, args.out, beam_args, keep_quotes=args.mbox_keep_quotes,
                                         progress=not args.quiet)
        print(json.dumps({"pages": pages, **summary}, indent=1))
        return 0
    if args.warc:
        pages, summary = run_warc_import(args.warc, args.out, beam_args, user_agent=args.user_agent,
                                         progress=not args.quiet)
        print(json.dumps({"pages": pages, **summary}, indent=1))
        return 0
    seeds = list(args.seeds)
    if args.seeds_file:
        with open(args.seeds_file, encoding="utf-8") as f:
            seeds += [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    if not seeds and not args.resume:
        raise ConfigError("give --seeds URL [URL ...] (or --seeds-file, --resume, --warc, --mbox, --html-dir)")
    for name in ("max_pages", "max_depth", "wave_size", "parallel_hosts", "browsers", "pages_per_browser",
                 "context_reuse"):
        if getattr(args, name) < (0 if name == "max_depth" else 1):
            raise ConfigError(f"--{name.replace('_', '-')} must be positive")
    if args.extract_workers < 0:
        raise ConfigError("--extract-workers must be >= 0 (0: one per core)")
    if args.delay < 0 or args.timeout <= 0 or args.max_bytes <= 0 or args.render_max_bytes <= 0:
        raise ConfigError("--delay must be >= 0, --timeout, --max-bytes and --render-max-bytes > 0")
    cc = CrawlConfig(user_agent=args.user_agent, optout_token=args.optout_token,
                     agent_string=agent_string(args.user_agent), honour_crawl_delay=not args.ignore_crawl_delay,
                     max_crawl_delay=args.max_crawl_delay, max_parallel_hosts=args.parallel_hosts,
                     read_timeout=args.timeout, max_bytes=args.max_bytes, retries=args.retries,
                     render_max_bytes=args.render_max_bytes,
                     sitemaps=not args.no_sitemaps, tdm_file=not args.no_tdm_file, pdf=not args.no_pdf, plain_text=not args.no_plain_text,
                     skip_media=not args.keep_media, render_workers=args.browsers,
                     render_pages_per_browser=args.pages_per_browser, extract_workers=args.extract_workers,
                     render_context_reuse=args.context_reuse,
                     progress_every=0.0 if args.quiet else 10.0)
    fc = FrontierConfig(max_pages_per_host=args.max_pages_per_host, wave_size=args.wave_size, scope=args.scope,
                        include=args.include, exclude=args.exclude)
    pages, summary = run_crawl(seeds, args.out, allow_private=args.allow_private, render=args.render,
                               max_pages=args.max_pages, max_depth=args.max_depth, delay=args.delay,
                               resume=args.resume, beam_args=beam_args, write_warc=args.write_warc,
                               progress=not args.quiet, crawl_config=cc, frontier_config=fc, order=args.order,
                               target_languages=args.target_languages, work_dir=args.work_dir)
    print(json.dumps({"pages": pages, **summary}, indent=1))
    return 0
