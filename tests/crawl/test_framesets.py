"""A frameset page, as old documentation generators (Javadoc) still write them: its frames are
links a crawl follows, and its <noframes> content is read as HTML, not as literal markup."""
from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.extract import extract_page, parse_html
from crawl.framesets import open_noframes
from crawl_testsite import Route

PROSE = ("The package overview lists every class of the cider library with a short description of "
         "what each one does and which release added it. ")
FRAMESET = ("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Frameset//EN\"><HTML><HEAD><TITLE>Overview</TITLE></HEAD>"
            "<FRAMESET cols=\"20%,80%\"><FRAME src=\"allclasses-frame.html\" name=\"packageFrame\" title=\"All classes\">"
            "<FRAME src=\"overview-summary.html\" name=\"classFrame\">"
            "<NOFRAMES><H2>Frame Alert</H2><P>" + PROSE * 3 + "</P><P>Link to <A HREF=\"overview-summary.html\">"
            "Non-frame version.</A></P></NOFRAMES></FRAMESET></HTML>")
ARTICLE = "<html><head><title>{t}</title></head><body><article><h1>{t}</h1><p>" + PROSE * 4 + "</p></article></body></html>"


def test_noframes_content_is_parsed_as_html():
    doc = parse_html(FRAMESET)
    noframes = doc.find(".//noframes")
    assert noframes is not None and noframes.find(".//a") is not None and "<" not in (noframes.text or "")
    ex = extract_page(FRAMESET, "http://docs.test/api/index.html")
    assert "The package overview lists every class" in ex.text
    assert "<" not in ex.text and "</P>" not in ex.text
    whole_doc = parse_html("<html><frameset><noframes><html><body><p>Inside a whole document.</p></body></html>"
                           "</noframes></frameset></html>")
    assert whole_doc.find(".//noframes/p").text == "Inside a whole document."
    assert open_noframes(parse_html("<p>no frames here</p>")) == 0


def test_frames_and_the_noframes_link_are_links():
    ex = extract_page(FRAMESET, "http://docs.test/api/index.html")
    links = {ln["url"]: ln["anchor"] for ln in ex.outlinks}
    assert links == {"http://docs.test/api/overview-summary.html": "Non-frame version.",
                     "http://docs.test/api/allclasses-frame.html": "All classes"}
    iframe = extract_page("<html><body><p>" + PROSE + "</p><iframe src='https://ads.test/x'></iframe></body></html>",
                          "http://docs.test/a.html")
    assert iframe.outlinks == []  # inline frames (embeds, ads, trackers) are not followed


def test_a_crawl_from_a_frameset_root_reaches_its_frames(local_site):
    routes = {"/api/index.html": Route(FRAMESET),
              "/api/allclasses-frame.html": Route(ARTICLE.format(t="All classes")),
              "/api/overview-summary.html": Route(ARTICLE.format(t="Overview summary"))}
    site = local_site(routes)
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="never", retries=0))
    try:
        frontier = [{"url": site.url + "/api/index.html", "depth": 0, "source": "seed"}]
        seen = []
        for _ in range(2):  # the root's wave, then the wave of its links
            out = c.crawl_host(frontier)
            seen += [p["url"] for p in out.pages]
            frontier = [{"url": ln["url"], "depth": 1, "source": "link"} for ln in out.links
                        if ln["url"] not in seen]
    finally:
        c.close()
    assert set(seen) == {site.url + p for p in routes}
