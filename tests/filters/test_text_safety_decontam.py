"""Safety word lists (whole words, per language), domain blocklist, classifier hook; decontamination."""
import json

import pytest

from corpus.errors import ConfigError
from filters.base import Doc
from filters.decontam import Decontamination, ngram_hashes
from filters.safety import Safety, host_blocked
from text_samples import EN, ZH


def unsafe_probability(text):  # the classifier hook under test
    return 0.9 if "forbidden-topic" in text else 0.1


def test_profanity_density_whole_words():
    s = Safety()
    rant = "I waited three damn weeks. What a load of crap. I am pissed off and this shit is broken. " * 2
    scores, keep, reason = s(Doc(id="a", text=rant, language="en"))
    assert (keep, reason) == (False, "safety:unsafe_words") and scores["unsafe_words"] >= 6
    # whole words only: "Scunthorpe", "classic", "cocktail" do not match
    clean = EN + " Scunthorpe classic cocktail assessment Dickens"
    assert s(Doc(id="b", text=clean, language="en"))[1:] == (True, None)


def test_placeholders_and_numerals_are_not_profanity():
    s = Safety()
    doc = ("FindFoo sets <XXX>_FOUND, <XXX>_INCLUDE_DIRS and <XXX>_LIBRARIES for each module XXX it finds; "
           "replace XXX with the module name. Chapter XXX covers Super Bowl XXX. "
           "xx, yy = np.meshgrid(x, y); Z = clf.decision_function(np.c_[xx.ravel(), yy.ravel()]) ") * 3
    assert s(Doc(id="c", text=EN + " " + doc, language="en"))[1:] == (True, None)
    spam = "xxx porn videos, free porno, hardcore xxx clips every day. " * 3
    assert s(Doc(id="s", text=spam, language="en"))[2] == "safety:unsafe_words"


def test_chinese_substring_match_and_domains():
    s = Safety(blocked_domains=["bad.example"])
    assert s(Doc(id="z", text=ZH + "色情色情色情色情", language="zh"))[2] == "safety:unsafe_words"
    assert s(Doc(id="u", text=EN, url="https://www.bad.example/x", language="en"))[2] == "safety:blocked_domain"
    assert host_blocked("http://bad.example./", frozenset({"bad.example"}))
    assert not host_blocked("https://notbad.example/", frozenset({"bad.example"}))


def test_classifier_hook():
    s = Safety(classifier=f"{__name__}:unsafe_probability")
    assert s(Doc(id="c", text=EN + " forbidden-topic", language="en"))[2] == "safety:classifier"
    assert s(Doc(id="d", text=EN, language="en"))[1]
    with pytest.raises(ConfigError):
        Safety(classifier="no.such.module:fn")


def test_decontamination_with_jsonl_and_text(tmp_path):
    passage = ("The keeper of the lighthouse at Port Aven planted seven quince trees along the sea wall in the "
               "spring of 1911, because the salt wind killed every apple tree he tried.")
    ev = tmp_path / "eval.jsonl"
    ev.write_text(json.dumps({"id": "q1", "text": passage, "answer": "salt wind"}) + "\n")
    d = Decontamination(eval_sets=[str(ev)], ngram=13)
    leak = Doc(id="l", text=EN + " As the story goes, " + passage.lower() + " Nobody knows more.")
    scores, keep, reason = d(leak)
    assert (keep, reason) == (False, "decontam:eval_ngram_overlap") and scores["decontam_hits"] >= 10
    assert d(Doc(id="ok", text=EN))[1:] == (True, None)
    # corpus-frequent n-grams are common phrases: they do not drop
    hits = leak.meta["decontam_ngrams"]
    assert d.decide_with(hits, frequent=set(hits)) == (True, None)
    assert d.decide_with(hits, frequent=set(hits[1:])) == (False, "decontam:eval_ngram_overlap")
    txt = tmp_path / "eval.txt"
    txt.write_text(passage + "\n")
    assert Decontamination(eval_sets=[str(txt)]).eval_hashes == d.eval_hashes == ngram_hashes(passage, 13)


def test_phrase_counter_counts_what_the_phrase_regex_finds():
    """PhraseCounter tries the phrase regex only where a first word occurs; its counts must be the
    regex's own, also for case variants re equates differently from str.lower() (ſ/s, ı/i, final
    sigma), changed lengths (İ), word-boundary near misses and overlapping phrases."""
    import random

    from filters.safety import PhraseCounter
    phrases = ["ball sack", "ball gag", "big black", "big black cock", "two girls one cup", "ısır bunu",
               "σέξ σκηνή", "hot carl", "s ucks here"]
    pc = PhraseCounter(phrases)
    rng = random.Random(4)
    junk = "ſıİIiSsΣσςᲀϵKk \n\t.,'’-abxyz"
    texts = ["", "Ball  Sack and BALL\tGAG", "aball sack", "ball sacks", "big black cock, big black", "BİG BLACK",
             "BALL ſACK", "ISIR BUNU", "Isır bunu", "ΣΈΞ ΣΚΗΝΉ", "ΣΈΞ σκηνή.", "two girls one cup" * 3]
    for _ in range(3000):
        ph = rng.choice(phrases)
        v = "".join(c.upper() if rng.random() < 0.3 else c for c in ph).replace(" ", rng.choice([" ", "\n ", "\u00a0"]))
        texts.append("".join(rng.choice(junk) for _ in range(rng.randrange(6))) + v
                     + "".join(rng.choice(junk) for _ in range(rng.randrange(6))) + " " + rng.choice(phrases))
    counts = [pc.count(t) for t in texts]
    assert counts == [len(pc.pattern.findall(t)) for t in texts]
    assert sum(c > 0 for c in counts) > 2000 and counts[1] == 2 and counts[2] == 0 and counts[4] == 2
