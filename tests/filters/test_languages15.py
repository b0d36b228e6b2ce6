"""The report's 15 languages: each has safety terms and stop words; list quirks are handled."""
from filters.base import Doc
from filters.gopher import GopherQuality
from filters.safety import Safety, package_wordlists
from filters.stopwords import REPORT_LANGUAGES, STOP_WORDS


def test_every_report_language_has_lists():
    assert package_wordlists(), "naughty-words lists missing: run `make wordlists`"
    s = Safety()
    for lang in REPORT_LANGUAGES:
        assert STOP_WORDS.get(lang), lang
        assert s.words.get(lang) or s.substr.get(lang), lang
    assert "naughty-words" in s.sources["tr"] and s.sources["vi"] == ["cidermill"]


def test_substring_scripts_and_exclusions():
    s = Safety()
    ko = "이 개새끼야 정말 개새끼 같은 개새끼"  # particles attach: substring match in Korean
    assert s(Doc(id="k", text=ko, language="ko"))[2] == "safety:unsafe_words"
    # Latin-only terms of the Chinese list ("13.") do not fire inside numbers
    assert s.score(Doc(id="z", text="2013. 年 13. 我们 2013.", language="zh"))["unsafe_words"] == 0
    # Swedish "sex" is six; Portuguese "aranha" is a spider: excluded, whole word lists stay
    six = "Vi har sex katter och sex hundar och sex fåglar hemma."
    assert s.score(Doc(id="s", text=six, language="sv"))["unsafe_words"] == 0
    assert s.score(Doc(id="s2", text=six.replace("sex", "fitta"), language="sv"))["unsafe_words"] == 3
    assert s.score(Doc(id="p", text="A aranha viu a aranha e outra aranha.", language="pt"))["unsafe_words"] == 0
    # multi-word terms match as phrases across whitespace
    assert s.score(Doc(id="t", text="Bu otuz  birci ve otuz birci.", language="tr"))["unsafe_words"] == 2


def test_stop_words_for_korean_and_vietnamese():
    g = GopherQuality(min_words=5)
    vi = "Tôi đã đọc cuốn sách này và thấy rất hay. Đây là một trong những cuốn sách của năm."
    assert g.score(Doc(id="v", text=vi, language="vi"))["gopher_stop_words"] >= 4
    ko = "우리는 그 책을 읽었다. 그리고 또 다른 책을 읽을 수 있는 시간이 있다."
    assert g.score(Doc(id="k", text=ko, language="ko"))["gopher_stop_words"] >= 4
    assert g.score(Doc(id="n", text="Lorem ipsum dolor sit amet consectetur.", language="vi"))["gopher_stop_words"] == 0
