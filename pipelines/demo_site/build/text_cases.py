"""Text-curation cases: PII pages, the people directory, the changelog (version strings that are
not IPs), near-duplicate groups, exact duplicates, low-quality pages (boilerplate only, spam,
lorem ipsum, gibberish, too short), mild profanity, and evaluation-set contamination."""
from __future__ import annotations

import re

from pipelines.demo_site.build.articles import Article
from pipelines.demo_site.build.page import Page, esc, paragraphs_html, strip_headings


# -- validators (labels are computed, not guessed) ------------------------------------------
def luhn_ok(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    s = iban.replace(" ", "").upper()
    s = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in s)) % 97 == 1


def ssn_ok(ssn: str) -> bool:
    a, g, s = ssn.split("-")
    return a not in ("000", "666") and not a.startswith("9") and g != "00" and s != "0000"


def _page(path, title, paras, **kw) -> Page:
    return Page(path=path, title=title, body=paragraphs_html(paras), paragraphs=strip_headings(paras), **kw)


# -- PII --------------------------------------------------------------------------------------
def pii_pages() -> list[Page]:
    pages = []
    emails = ["press@example.com", "orders@cidermill.example.org", "j.smith+orchard@example.co.uk"]
    phones = ["+1 202-555-0143", "+44 20 7946 0958", "+33 1 99 00 12 34", "+49 30 5557 1234", "+81 3-5555-0123"]
    paras = [
        "We are a small team and we read every message. Please choose the address that fits your question so it reaches the right person quickly.",
        f"For interviews and photographs, write to our press office at {emails[0]}. Questions about orders, deliveries and invoices go to {emails[1]}, and our volunteer coordinator John Smith answers at {emails[2]}.",
        f"You can also call us. The office in Washington is on {phones[0]}, the London studio on {phones[1]}, our Paris correspondent on {phones[2]}, the Berlin desk on {phones[3]} and the Tokyo bureau on {phones[4]}.",
        "Phone lines are open from nine to five on weekdays. Outside those hours please leave a message with your name and number and we will call you back.",
    ]
    pages.append(_page("/contact.html", "Contact us", paras, categories=["pii", "contact"], quality="good",
                       pii={"email": emails, "phone": phones}))

    v4 = ["192.0.2.15", "198.51.100.23", "203.0.113.200"]
    v6 = ["2001:db8::1", "2001:db8:85a3::8a2e:370:7334", "fe80::1ff:fe23:4567:890a"]
    paras = [
        "This page reports the state of the machines that serve the Gazette. It is updated by hand, so it may lag behind the real situation by a few hours.",
        f"The main web server answers on {v4[0]} and the image server on {v4[1]}. Last Tuesday the backup host at {v4[2]} ran out of disk space during the nightly copy and was restarted.",
        f"Our IPv6 addresses are {v6[0]} for the web server and {v6[1]} for the mail relay. If you see requests from {v6[2]} in your logs, that is a link-local address from our office network and can be ignored.",
        "If the site is unreachable from your network, please send us a traceroute so we can see where the packets stop.",
    ]
    pages.append(_page("/network/status.html", "Server status", paras, categories=["pii", "ip_addresses"],
                       pii={"ipv4": v4, "ipv6": v6}, author="Ops team", date="2024-07-02"))

    cards = ["4111 1111 1111 1111", "5500-0000-0000-0004", "3782 822463 10005", "4111 1111 1111 1112",
             "1234 5678 9012 3456"]
    ibans = ["DE89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32", "FR76 3000 6000 0112 3456 7890 188",
             "DE89 3704 0044 0532 0130 01"]
    paras = [
        "Payments in our shop are handled by a card processor; we never store card numbers ourselves. The examples below are the test numbers our developers use, so please do not try them at the checkout.",
        f"A Visa test card looks like {cards[0]}, a Mastercard test card like {cards[1]} and an American Express test card like {cards[2]}. A typo such as {cards[3]} fails the checksum, and so does the made-up sequence {cards[4]}.",
        f"For bank transfers, our German account is {ibans[0]} and the British one is {ibans[1]}. Customers in France may use {ibans[2]}. Note that an older flyer printed {ibans[3]}, which has a wrong check digit: do not use it.",
        "Your order reference, such as 2024-000-1187, is not a card number and is safe to share with our support team.",
    ]
    pii = {"credit_card": [c for c in cards if luhn_ok(c)], "credit_card_invalid": [c for c in cards if not luhn_ok(c)],
           "iban": [i for i in ibans if iban_ok(i)], "iban_invalid": [i for i in ibans if not iban_ok(i)]}
    pages.append(_page("/shop/payment-help.html", "Payment help", paras, categories=["pii", "credit_cards", "iban"],
                       pii=pii, not_pii={"order_reference": ["2024-000-1187"]}))

    ssns = ["219-09-9999", "078-05-1120", "512-44-7301", "000-12-3456", "666-45-1234", "123-00-4567", "987-65-4320"]
    paras = [
        "Seasonal pickers employed by our US partner farm must fill in a tax form before their first shift. This page explains the fields that cause the most confusion.",
        f"The Social Security number is written as three groups of digits, for example {ssns[0]}. The number {ssns[1]} became famous after it was printed on sample cards sold with wallets, and thousands of people used it by mistake. A new worker, Maria Gomez, wrote hers as {ssns[2]} on the form we show in training.",
        f"Some numbers are never issued: {ssns[3]}, {ssns[4]}, {ssns[5]} and {ssns[6]} are all invalid, because of their first or middle group.",
        "Keep the completed form in a locked drawer and never send it by email.",
    ]
    pages.append(_page("/hr/forms.html", "Filling in the seasonal worker tax form", paras, categories=["pii", "ssn"],
                       pii={"ssn": [s for s in ssns if ssn_ok(s)], "ssn_invalid": [s for s in ssns if not ssn_ok(s)],
                            "person_name": ["Maria Gomez"]}))

    # the people directory: many kinds of personal data aggregated on one page
    people = [
        ("Alice Martin", "alice.martin@example.com", "+1 415-555-0101", "12 Orchard Lane, Springfield", "1984-02-11", "219-45-6789"),
        ("Bruno Keller", "b.keller@example.de", "+49 89 5551 2345", "Apfelweg 3, 80331 München", "1979-07-30", None),
        ("Chloé Dubois", "chloe.dubois@example.fr", "+33 6 99 00 45 67", "8 rue des Pommiers, 14000 Caen", "1991-11-05", None),
        ("Diego Ramírez", "diego.ramirez@example.es", "+34 655 123 456", "Calle Manzano 14, 33001 Oviedo", "1988-03-22", None),
        ("Emma Thompson", "emma.t@example.co.uk", "+44 161 496 0123", "4 Cider Row, Hereford HR1 2AB", "1975-09-14", None),
        ("Farid Haddad", "farid.haddad@example.com", "+1 312-555-0177", "901 Press Street, Chicago", "1993-12-01", "532-18-2290"),
        ("Grace Liu", "grace.liu@example.org", "+86 10 5555 0198", "Beijing, Haidian District", "1986-06-18", None),
        ("Hiroshi Tanaka", "h.tanaka@example.jp", "+81 90-5555-0142", "Aomori, Hirosaki 1-2-3", "1969-04-09", None),
        ("Isabel Costa", "isabel.costa@example.pt", "+351 21 555 0134", "Rua das Macieiras 7, Lisboa", "1990-08-27", None),
        ("Jakub Nowak", "jakub.nowak@example.pl", "+48 22 555 01 23", "ul. Sadowa 5, Warszawa", "1982-01-15", None),
        ("Kim Min-jun", "minjun.kim@example.kr", "+82 2-555-0187", "Seoul, Mapo-gu", "1995-10-03", None),
        ("Laura Bianchi", "laura.bianchi@example.it", "+39 02 5555 0165", "Via dei Meli 22, Milano", "1987-05-12", None),
    ]
    rows = "\n".join(
        f"<tr><td>{esc(n)}</td><td>{esc(e)}</td><td>{esc(ph)}</td><td>{esc(a)}</td><td>{b}</td><td>{s or ''}</td></tr>"
        for n, e, ph, a, b, s in people)
    intro = ("This directory lists every volunteer who helped at the 2023 harvest, with the contact details "
             "they gave us on their registration forms.")
    outro = "If your details are wrong or you want to be removed from the list, tell the volunteer coordinator."
    body = (f"<p>{esc(intro)}</p>\n<table class=\"directory\">\n<thead><tr><th>Name</th><th>Email</th><th>Phone</th>"
            f"<th>Address</th><th>Date of birth</th><th>SSN</th></tr></thead>\n{rows}\n</table>\n<p>{esc(outro)}</p>")
    pages.append(Page(path="/people/directory.html", title="Volunteer directory", body=body,
                      paragraphs=[intro, outro], categories=["pii", "people_directory"], quality="low",
                      pii={"person_name": [p[0] for p in people], "email": [p[1] for p in people],
                           "phone": [p[2] for p in people], "postal_address": [p[3] for p in people],
                           "date_of_birth": [p[4] for p in people], "ssn": [p[5] for p in people if p[5]]},
                      notes="aggregates names, emails, phones, addresses, birth dates and SSNs of 12 people"))

    # changelog: dotted version numbers that look like IPv4 addresses but are not
    versions = ["1.2.3.4", "2.0.10.1", "3.14.15.92", "10.0.0.1"]
    paras = [
        "This changelog lists what changed in the software that runs the Gazette website.",
        f"Version {versions[3]} (2024-06-30): new image gallery, faster search and a fix for broken links in the calendar.",
        f"Version {versions[2]} (2024-03-14): the newsletter form now checks email addresses before sending; build 3.14.15.92 was tagged from the release branch.",
        f"Version {versions[1]} (2023-11-02): translated the navigation into six languages and removed the old comment system.",
        f"Version {versions[0]} (2023-05-01): first public release of the site engine.",
    ]
    pages.append(_page("/changelog.html", "Changelog", paras, categories=["version_strings"], quality="low",
                       not_pii={"ipv4_lookalike_versions": versions},
                       notes="dotted version strings are NOT IP addresses"))
    return pages


# -- near duplicates and exact duplicates ---------------------------------------------------
def _edit(paras: list[str], replace: dict[str, str] | None = None, drop: int | None = None,
          add: str | None = None) -> list[str]:
    out = list(paras)
    for old, new in (replace or {}).items():
        out = [p.replace(old, new) for p in out]
    if drop is not None:
        del out[drop]
    if add:
        out.append(add)
    return out


def shingles(text: str, n: int = 5, chars: bool = False) -> set:
    text = re.sub(r"\s+", " ", text.lower()).strip()
    if chars:
        text = text.replace(" ", "")
        return {text[i:i + n] for i in range(max(1, len(text) - n + 1))}
    words = re.findall(r"\w+", text)
    return {tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1))}


def jaccard(a: str, b: str, chars: bool = False) -> float:
    sa, sb = shingles(a, chars=chars), shingles(b, chars=chars)
    return round(len(sa & sb) / len(sa | sb), 4)


DUP_PLANS = {
    # group -> (source article path, [(variant path, edit kwargs)])
    "dup-pressing": ("/en/pressing-apples.html", [
        ("/dup/pressing-apples-reprint.html", {"replace": {"modest garden tree": "modest backyard tree",
                                                           "twenty minutes": "about twenty minutes"}}),
        ("/dup/pressing-apples-syndicated.html", {"add": "This article first appeared in the autumn issue of Orchard Notes and is reprinted with permission."}),
        ("/dup/pressing-apples-short.html", {"drop": 2}),
    ]),
    "dup-streuobst": ("/de/streuobstwiesen.html", [
        ("/dup/streuobstwiesen-kopie.html", {"replace": {"mehrere tausend": "über fünftausend"}}),
        ("/dup/streuobstwiesen-gekuerzt.html", {"drop": 3}),
    ]),
    "dup-pingguo": ("/zh/pingguo-zaipei.html", [
        ("/dup/pingguo-zaipei-zhuanzai.html", {"add": "本文转载自《果园通讯》，转载请注明出处。"}),
        ("/dup/pingguo-zaipei-xiugai.html", {"replace": {"好几个月": "半年左右"}}),
    ]),
}


def dup_pages(articles: dict[str, Article], by_path: dict[str, Page]) -> tuple[list[Page], dict]:
    """Variants of three articles; the originals join their groups. Returns (pages, group info)."""
    pages, groups = [], {}
    for group, (src, variants) in DUP_PLANS.items():
        art = articles[src]
        orig = by_path[src]
        orig.dup_group = group
        cjk = art.lang in ("ja", "zh")
        members = [{"path": src, "jaccard_to_first": 1.0}]
        for path, kw in variants:
            paras = _edit(art.paragraphs, **kw)
            pg = _page(path, art.title, paras, lang=art.lang, author=art.author, date=art.date,
                       categories=["prose", "near_duplicate"], dup_group=group, hub="/dup/",
                       notes=f"near-duplicate of {src}: {', '.join(kw)}")
            pages.append(pg)
            members.append({"path": path, "edit": sorted(kw),
                            "jaccard_to_first": jaccard(orig.main_text(), pg.main_text(), chars=cjk)})
        groups[group] = {"shingles": "char-5" if cjk else "word-5", "members": members}
    return pages, groups


# -- low quality, spam, unsafe, eval contamination --------------------------------------------
EVAL_PASSAGES = [{
    "id": "orchardqa-0042",
    "benchmark": "OrchardQA (a made-up evaluation set for decontamination tests)",
    "text": ("The keeper of the lighthouse at Port Aven planted seven quince trees along the sea wall in the "
             "spring of 1911, because the salt wind killed every apple tree he tried. By 1920 the quinces had "
             "grown taller than the wall itself, and sailors used their white blossom as a daymark when they "
             "steered into the narrow harbour mouth."),
    "question": "Why did the lighthouse keeper plant quince trees instead of apple trees?",
    "answer": "Because the salt wind killed every apple tree he tried.",
}]
EVAL_FRAGMENT = ("the salt wind killed every apple tree he tried. By 1920 the quinces had grown taller "
                 "than the wall itself")


def quality_pages() -> list[Page]:
    pages = []
    body = ('<p class="share">Share: <a href="https://facebook.example/share">Facebook</a> | '
            '<a href="https://twitter.example/share">Twitter</a> | <a href="mailto:?subject=Gazette">Email</a></p>\n'
            '<ul class="related"><li><a href="/en/">More articles</a></li><li><a href="/gallery/">Gallery</a></li>'
            '<li><a href="/data/">Data</a></li></ul>')
    pages.append(Page(path="/misc/boilerplate-only.html", title="Tags", body=body, paragraphs=[],
                      categories=["boilerplate_only"], quality="none", expected_snippets=[],
                      notes="nothing but navigation, share links and the site template"))

    kw = ("cheap cider best cider buy cider online cider deals cider sale discount cider cider cheap "
          "free shipping cider cider cider best price cider apple cider cheap")
    paras = [kw] * 3 + ["Buy cider now! Best cider! Cheap cider! Cider cider cider!"] * 4 + [
        "cider cider cider cider cider cider cider cider cider cider cider cider cider cider cider cider"]
    pages.append(_page("/misc/spam-keywords.html", "Cheap cider best cider buy cider", paras,
                       categories=["spam", "keyword_stuffing"], quality="low",
                       extra_head='<meta name="keywords" content="cider, cheap cider, best cider, buy cider, cider deals">\n'))

    line = "Click here to win a free orchard tour today!"
    pages.append(_page("/misc/spam-repeated.html", "You have won", [line] * 40,
                       categories=["spam", "repeated_lines"], quality="low", expected_snippets=[line],
                       extra={"repeated_line": line, "repeats": 40}))

    lorem = [
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.",
        "Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.",
        "Curabitur pretium tincidunt lacus. Nulla gravida orci a odio. Nullam varius, turpis et commodo pharetra, est eros bibendum elit, nec luctus magna felis sollicitudin mauris. Integer in mauris eu nibh euismod gravida.",
    ]
    pages.append(_page("/misc/lorem.html", "Page title goes here", lorem, lang="la",
                       categories=["lorem_ipsum", "placeholder"], quality="low",
                       notes="html lang says la; the text is placeholder Latin"))

    gib = ["xkq zpw vbnm qwrt plkj hgfd sazx cvbn mklo iuyt rewq asdf ghjk lzxc vbnq wert yuio pasd fghj klzx",
           "ooo aaa eee 4589 zz1 qq2 ww3 rrr ttt yyy uuu iii ppp sss ddd fff ggg hhh jjj kkk lll zzz xxx ccc",
           "bnm,./ ;'[] 7777 8888 9999 ]]]] [[[[ //// \\\\ ---- ++++ ==== ____ ~~~~ #### $$$$ %%%% ^^^^ &&&&"]
    pages.append(_page("/misc/gibberish.html", "asdf", gib, lang=None, categories=["gibberish"], quality="low"))

    pages.append(_page("/misc/short.html", "Coming soon", ["Coming soon."], categories=["too_short"],
                       quality="low"))

    rant = [
        "I waited three damn weeks for my order and when the box finally arrived the bottles were smashed. What a load of crap.",
        "The courier clearly threw the parcel over the fence. Bloody hell, is it so hard to read the word FRAGILE printed in red on every side?",
        "Customer service told me to be patient. I am pissed off, honestly, and I will not order this shit again until they sort out their packaging.",
        "To be fair, the one bottle that survived tasted great, which only makes it more annoying.",
    ]
    pages.append(_page("/misc/angry-review.html", "My order arrived broken", rant,
                       categories=["profanity", "unsafe_words"], quality="low",
                       unsafe_words=["damn", "crap", "Bloody hell", "pissed off", "shit"],
                       author="anonymous", date="2024-02-29"))

    wrong = [
        "Las abejas son imprescindibles para la polinización de los manzanos, porque la mayoría de las variedades no pueden fecundarse con su propio polen.",
        "Por eso muchos agricultores colocan colmenas en sus fincas durante la floración, que dura apenas dos semanas. Un manzano en flor atrae a miles de abejas en un solo día soleado, y cada una de ellas visita cientos de flores.",
        "Sin embargo, las abejas silvestres también cumplen un papel importante, sobre todo cuando hace frío o llueve y las abejas de la miel se quedan en la colmena. Los abejorros, por ejemplo, vuelan con temperaturas mucho más bajas.",
        "Conservar setos, flores silvestres y rincones sin labrar alrededor del huerto ayuda a que estas especies encuentren alimento y refugio durante todo el año.",
    ]
    pages.append(_page("/misc/wrong-lang-attribute.html", "Abejas y manzanos", wrong, lang="es", html_lang="en",
                       categories=["prose", "wrong_lang_attribute"], author="Marta Gil", date="2024-04-03",
                       notes="<html lang=\"en\"> but the text is Spanish"))
    mixed = [("en", "Our twinning association links three orchard villages in England, France and Germany, and this page greets visitors in all three languages."),
             ("fr", "Notre association de jumelage relie trois villages de vergers en Angleterre, en France et en Allemagne, et chaque automne nous organisons ensemble une grande fête du cidre."),
             ("de", "Unser Partnerschaftsverein verbindet drei Obstdörfer in England, Frankreich und Deutschland, und jedes Jahr besuchen sich die Familien gegenseitig zur Apfelernte."),
             ("en", "Everyone is welcome, whichever language you speak and however little you know about apples.")]
    pg = _page("/misc/mixed-languages.html", "Twinning: three villages, three languages", [t for _, t in mixed],
               lang="mul", html_lang="en", categories=["prose", "mixed_languages"], author="The editors", date="2024-09-01")
    pg.extra["paragraph_langs"] = [lang for lang, _ in mixed]
    pages.append(pg)

    ep = EVAL_PASSAGES[0]
    paras = [
        "Our pub quiz on Friday had a local history round, and one passage caught everybody out.",
        ep["text"],
        ep["question"] + " Most teams guessed the soil, but the answer was in the passage all along.",
        "Next week's round is about famous orchards of the world, so start reading now.",
    ]
    pages.append(_page("/blog/pub-quiz.html", "Friday pub quiz: the lighthouse round", paras,
                       categories=["eval_contamination"], eval_passages=[ep["id"]], author="Quizmaster Pat",
                       date="2024-04-05", expected_snippets=[ep["text"][:120]],
                       notes="contains the whole evaluation passage orchardqa-0042 and its question"))
    paras = [
        "Some of my favourite orchard stories come from the coast, where apples struggle and other fruit takes over.",
        f"One story tells how {EVAL_FRAGMENT}, and how sailors came to rely on the trees.",
        "I have not been able to confirm it in any archive, but it is a lovely tale either way.",
    ]
    pages.append(_page("/blog/coastal-orchards.html", "Orchards by the sea", paras,
                       categories=["eval_contamination", "partial_overlap"], eval_passages=[ep["id"]],
                       author="Ruth Penrose", date="2024-04-12",
                       extra={"eval_overlap": EVAL_FRAGMENT},
                       notes="shares a 20-word span (>= 13-gram) with orchardqa-0042"))
    return pages
