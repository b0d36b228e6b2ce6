"""Gopher document rules, repetition rules and C4 line cleaning, each threshold hit on purpose."""
from filters.base import Doc
from filters.c4_lines import C4Lines
from filters.gopher import GopherQuality
from filters.repetition import Repetition, dup_ngram_fraction, top_ngram_fraction
from text_samples import EN, JA, SPAM


def run(f, text, lang="en"):
    doc = Doc(id="x", text=text, language=lang)
    return f(doc)


def test_gopher_keeps_prose_and_names_each_rule():
    g = GopherQuality()
    assert run(g, EN)[1:] == (True, None)
    assert run(g, "Too short to be a document.")[2] == "gopher:too_few_words"
    assert run(g, " ".join(["extraordinarily"] * 80))[2] == "gopher:long_words"
    assert run(g, " ".join(["a"] * 80))[2] == "gopher:short_words"
    assert run(g, EN + " #tag" * 40)[2] == "gopher:symbols"
    bullets = "\n".join(f"- item number {i} of the list with some words" for i in range(30))
    assert run(g, bullets)[2] == "gopher:bullet_lines"
    ellipsis = "\n".join(f"The story continues on the next page and then {i}..." for i in range(20))
    assert run(g, ellipsis)[2] == "gopher:ellipsis_lines"
    assert run(g, " ".join(str(1000 + i) for i in range(200)) + " the and of")[2] == "gopher:non_alpha_words"
    assert run(g, " ".join(["orchard", "apple", "cider"] * 30))[2] == "gopher:no_stop_words"
    titles = " ".join(f"The History of Cider Part {i} A Guide to the Orchard" for i in range(8))  # a hub page
    assert run(g, titles)[2] == "gopher:no_sentences"


def test_gopher_cjk_is_judged_per_character():
    scores, keep, reason = run(GopherQuality(), JA, lang="ja")
    assert keep, reason
    assert scores["gopher_mean_word_len"] == 1.0 and scores["gopher_words"] > 100


def test_repetition_scores_and_reasons():
    r = Repetition()
    s, keep, _ = run(r, EN)
    assert keep and s["rep_dup_lines"] == 0 and s["rep_dup_5gram"] == 0
    s, keep, reason = run(r, SPAM)
    assert not keep and reason == "repetition:duplicate_lines"
    assert s["rep_dup_lines"] > 0.9
    words = "a b c d e a b c d e x".split()
    total = sum(map(len, words))
    assert dup_ngram_fraction(words, 5, total) == 5 / 11
    assert abs(top_ngram_fraction(words, 2, total) - 4 / 11) < 1e-9
    looped = " ".join(["the cider press turns slowly in the cold barn"] * 10)
    assert run(r, looped)[2].startswith("repetition:top_")


def test_c4_lines_removes_notices_keeps_content():
    c = C4Lines()
    text = EN + "\nWe use cookies to improve your experience. Accept cookies\nRead more\nPlease enable JavaScript to view.\n" + EN
    doc = Doc(id="x", text=text)
    s, keep, reason = c(doc)
    assert keep, reason
    assert "cookies" not in doc.text and "Read more" not in doc.text and "JavaScript" not in doc.text
    assert doc.text.count("orchard") == 2 and 0 < s["c4_removed_lines"] < 1
    assert c(Doc(id="y", text="Lorem ipsum dolor sit amet, consectetur adipiscing elit."))[2] == "c4:lorem_ipsum"
    s, keep, reason = c(Doc(id="z", text="Home | About\nAccept all cookies\nRead more about us\nLoad more"))
    assert reason == "c4:mostly_boilerplate"


def test_c4_keyword_shortcut_decides_as_the_patterns_do():
    """The default patterns run only on lines holding one of their words; under re.I four non-ASCII
    letters also match ASCII ones (long s, Kelvin sign, dotted and dotless i), so lines with those
    still reach the patterns. Every line must be judged as the plain case-insensitive patterns judge it."""
    import re

    from filters.c4_lines import DEFAULT_PATTERNS
    plain = re.compile("|".join(f"(?:{p})" for p in DEFAULT_PATTERNS), re.I)
    lines = ["Please enable JavaſCript in your browser", "\u212aeep cookies? Accept all cookies", "ſhare",
             "Manage cookıes İn settings", "READ MORE", "  Continue reading more  ", "Subscribe to our Newsletter",
             "All Rights Reserved", "The cookie jar was empty.", "Pin it", "pın it", "Tweet this", "Ordinary text",
             "Köln: Nutzung von Cookies akzeptieren (cookie policy)", ""]
    c = C4Lines()
    for line in lines:
        s = line.strip()
        assert c._is_boilerplate(line) == bool(s and len(s) <= 400 and plain.search(s)), line
    assert c._is_boilerplate("Please enable JavaſCript in your browser") and c._is_boilerplate("ſhare")
    custom = C4Lines(extra_patterns=[r"\bsponsored\b"])
    assert custom.keywords is None and custom._is_boilerplate("Sponsored")
