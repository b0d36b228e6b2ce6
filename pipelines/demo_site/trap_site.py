"""A shop-and-magazine site built like real ones, to measure crawl order: good articles hidden
among the low-value sections real sites have.

  /articles/<topic>/<n>           articles (English prose, 8 topics; one topic has far more pages)
  /articles/<topic>/<n>/print     print versions: the same text again (near duplicates)
  /articles/<topic>/?page=N       topic listings, paginated without end (near-duplicate pages)
  /fr/articles/<topic>/<n>        French translations (outside the target language)
  /forum/<n>                      short forum posts (too short for the text filters)
  /tags/<tag>?page=N              tag pages: lists of links, pagination without end
  /events/<yyyy>/<mm>/            a calendar with previous/next month links forever
  /search?color=..&size=..&sort=  faceted search: every combination links to more combinations
  /cart/, /account/               disallowed by robots.txt (a crawler must never fetch them)

Pages are generated from their path (deterministic, no files): `page(url)` returns the text and
the links with their anchor text and block (content or nav), the way an extractor reports them.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

HOST = "shop.example"
BASE = f"http://{HOST}"
ROBOTS = "User-agent: *\nDisallow: /cart/\nDisallow: /account/\n"
TOPICS = {"orchards": 120, "pressing": 12, "fermentation": 12, "bottling": 12, "history": 12,
          "pruning": 12, "pests": 12, "markets": 12}
VOCAB = {
    "orchards": "orchard apple tree rootstock blossom hillside grower harvest variety",
    "pressing": "press pomace juice rack cloth mill grinder pulp yield",
    "fermentation": "yeast fermentation sugar gravity vessel airlock temperature lees acidity",
    "bottling": "bottle cork label carbonation sediment capper crate siphon storage",
    "history": "monastery century farmhouse tradition village ledger ancestor county heritage",
    "pruning": "pruning branch shears canopy winter spur bud ladder scaffold",
    "pests": "codling moth scab aphid orchard spray trap canker blight",
    "markets": "market stall buyer price festival customer tasting vendor season",
}
TAGS = ["seasonal", "beginner", "tools", "classic", "review", "guide"]
COLORS, SIZES, SORTS = ["red", "green", "gold", "amber"], ["small", "medium", "large"], ["price", "new", "rating"]
_EN = ["The {a} near the {b} was checked every morning because the {c} changes quickly in autumn.",
       "Most growers keep a notebook about the {a}, and they write down how the {b} behaved that year.",
       "When the {a} is ready, the {b} should be handled gently so that the {c} stays clean.",
       "A good {a} depends on patience, and nobody in the village rushes the {b} or the {c}.",
       "Our neighbours learned that a careful {a} saves more time than any new {b} ever could.",
       "It is easy to forget the {a} until the {b} reminds you that the {c} needs attention.",
       "In the cellar we compare each {a} with last season's {b} and taste the difference."]
_FR = ["Le {a} près du {b} était vérifié chaque matin parce que le {c} change vite en automne.",
       "La plupart des producteurs notent tout sur le {a} et sur la manière dont le {b} a évolué.",
       "Quand le {a} est prêt, il faut manipuler le {b} avec douceur pour que le {c} reste propre.",
       "Dans la cave nous comparons chaque {a} avec le {b} de la saison dernière."]


@dataclass
class Page:
    url: str
    status: int
    text: str = ""
    kind: str = ""                      # article | print | listing | french | forum | tag | event | search | home
    topic: str | None = None
    links: list[tuple[str, str, str]] = field(default_factory=list)   # (url, anchor, block)

    @property
    def valuable(self) -> bool:
        """What a good crawl order should reach: the original English articles."""
        return self.kind == "article"


def _prose(rng: random.Random, topic: str, n_sent: int, templates) -> str:
    words = VOCAB[topic].split()
    sents = [rng.choice(templates).format(a=rng.choice(words), b=rng.choice(words), c=rng.choice(words))
             for _ in range(n_sent)]
    return " ".join(sents)


def _title(topic: str, n: int) -> str:
    w = VOCAB[topic].split()
    return f"How the {w[n % len(w)]} shapes the {w[(n * 3 + 1) % len(w)]} in {topic}"


def _nav(rng: random.Random) -> list[tuple[str, str, str]]:
    y, m = 2020 + rng.randrange(6), 1 + rng.randrange(12)
    return [(f"{BASE}/", "Home", "nav"), (f"{BASE}/cart/", "Cart", "nav"), (f"{BASE}/account/login", "Log in", "nav"),
            (f"{BASE}/tags/{rng.choice(TAGS)}?page=1", "Tags", "nav"), (f"{BASE}/events/{y}/{m:02d}/", "Events", "nav"),
            (f"{BASE}/search?color={rng.choice(COLORS)}&size={rng.choice(SIZES)}&sort={rng.choice(SORTS)}",
             "Shop", "nav"), (f"{BASE}/forum/{rng.randrange(400)}", "Forum", "nav")]


def _article_links(rng: random.Random, topic: str, n: int) -> list[tuple[str, str, str]]:
    out = []
    for _ in range(3):
        k = rng.randrange(TOPICS[topic])
        out.append((f"{BASE}/articles/{topic}/{k}", _title(topic, k), "content"))
    other = rng.choice(sorted(TOPICS))
    k = rng.randrange(TOPICS[other])
    out.append((f"{BASE}/articles/{other}/{k}", _title(other, k), "content"))
    out.append((f"{BASE}/articles/{topic}/{n}/print", "Print", "nav"))
    out.append((f"{BASE}/fr/articles/{topic}/{n}", "Français", "nav"))
    out.append((f"{BASE}/tags/{rng.choice(TAGS)}?page=1", rng.choice(TAGS), "nav"))
    return out


def page(url: str) -> Page:
    p = urlsplit(url)
    if p.netloc != HOST:
        return Page(url, 404)
    path, q = p.path, dict(parse_qsl(p.query))
    rng = random.Random(url)
    if path == "/":
        links = [(f"{BASE}/articles/{t}/?page=1", f"All about {t}", "content") for t in sorted(TOPICS)]
        links += [(f"{BASE}/articles/orchards/{k}", _title("orchards", k), "content") for k in range(6)]
        return Page(url, 200, "Welcome to the cider shop and magazine.", "home", None, links + _nav(rng))
    m = re.fullmatch(r"/(fr/)?articles/([a-z]+)/(\d+)(/print)?", path)
    if m and m.group(2) in TOPICS and int(m.group(3)) < TOPICS[m.group(2)]:
        topic, n = m.group(2), int(m.group(3))
        text = _prose(random.Random(f"{topic}/{n}"), topic, 14, _FR if m.group(1) else _EN)
        kind = "french" if m.group(1) else "print" if m.group(4) else "article"
        return Page(url, 200, _title(topic, n) + "\n\n" + text, kind, topic, _article_links(rng, topic, n) + _nav(rng))
    m = re.fullmatch(r"/articles/([a-z]+)/", path)
    if m and m.group(1) in TOPICS:
        topic, pg = m.group(1), max(1, int(q.get("page", "1") or 1))
        ks = [rng.randrange(TOPICS[topic]) for _ in range(8)]
        links = [(f"{BASE}/articles/{topic}/{k}", _title(topic, k), "content") for k in ks]
        links.append((f"{BASE}/articles/{topic}/?page={pg + 1}", "Next", "nav"))
        return Page(url, 200, "\n".join(_title(topic, k) for k in ks), "listing", topic, links + _nav(rng))
    if re.fullmatch(r"/forum/\d+", path):
        return Page(url, 200, "Thanks, same here. Anyone tried it?", "forum", None,
                    [(f"{BASE}/forum/{rng.randrange(400)}", "Reply", "nav")] + _nav(rng))
    m = re.fullmatch(r"/tags/([a-z]+)", path)
    if m:
        pg = max(1, int(q.get("page", "1") or 1))
        topic = rng.choice(sorted(TOPICS))
        ks = [rng.randrange(TOPICS[topic]) for _ in range(6)]
        links = [(f"{BASE}/articles/{topic}/{k}", _title(topic, k), "content") for k in ks]
        links.append((f"{BASE}/tags/{m.group(1)}?page={pg + 1}", "Next", "nav"))
        return Page(url, 200, "\n".join(_title(topic, k) for k in ks), "tag", None, links + _nav(rng))
    m = re.fullmatch(r"/events/(\d{4})/(\d{2})/", path)
    if m:
        y, mo = int(m.group(1)), int(m.group(2))
        prev_ = (y, mo - 1) if mo > 1 else (y - 1, 12)
        next_ = (y, mo + 1) if mo < 12 else (y + 1, 1)
        links = [(f"{BASE}/events/{a}/{b:02d}/", t, "nav") for (a, b), t in ((prev_, "‹"), (next_, "›"))]
        return Page(url, 200, f"Events in {y}-{mo:02d}: none listed.", "event", None, links + _nav(rng))
    if path == "/search":
        links = [(f"{BASE}/search?color={c}&size={s}&sort={o}&page={int(q.get('page', '1') or 1) + 1}", c, "nav")
                 for c, s, o in [(rng.choice(COLORS), rng.choice(SIZES), rng.choice(SORTS)) for _ in range(4)]]
        return Page(url, 200, "12 products match your filters.", "search", None, links + _nav(rng))
    return Page(url, 404)
