"""The whole per-document chain without Beam: bad input never raises, every score on every row."""
import pytest

from corpus.errors import ConfigError
from filters.chain import TextChain, funnel, load_config
from corpus.report import ReportStats
from text_samples import EN, EN2, FR, JA, SPAM

NO_GLOBAL = {"stages": ["input", "c4_lines", "pii", "langid", "gopher", "repetition", "safety", "quality"]}


@pytest.fixture(scope="module")
def chain():
    return TextChain(load_config(overrides=NO_GLOBAL))


def test_good_documents_keep_every_score(chain):
    for i, text in enumerate([EN + "\n\n" + EN2, FR, JA]):
        row = chain.process({"id": f"d{i}", "url": "https://x.example/", "text": text})
        assert row["drop_reason"] is None, (i, row["drop_reason"])
        for name in chain.score_ranges():
            assert row[name] is not None, name
    assert set(row) >= set(chain.schema().names)


def test_dropped_rows_still_have_later_scores(chain):
    row = chain.process({"id": "s", "url": "u", "text": SPAM})
    assert row["drop_reason"] is not None
    assert row["quality_score"] is not None and row["quality_score"] < 0.5
    assert row["rep_dup_lines"] > 0.9


@pytest.mark.parametrize("page,reason", [
    ({"id": "a", "text": None}, "bad_input:missing_text"),
    ({"id": "b", "text": "   \n "}, "bad_input:empty"),
    ({"id": "c", "text": b"\xff\xfe\xfa" * 100}, "bad_input:invalid_utf8"),
    ({"id": "d", "text": "".join(chr(i % 20) for i in range(1000))}, "bad_input:binary"),
    ({"id": "e", "text": 12345}, "bad_input:text_not_a_string"),
    ({}, "bad_input:missing_fields"),
    ({"id": "f", "text": EN, "training_allowed": False}, "opt_out:training_not_allowed"),
    ({"id": "g", "text": EN, "robots_noindex": True}, "opt_out:noindex"),
])
def test_bad_input_gets_a_reason(chain, page, reason):
    row = chain.process(page)
    assert (row["drop_stage"], row["drop_reason"]) == ("input", reason)
    assert row["id"]
    if reason.startswith("opt_out"):
        assert row["text"] is None  # opted-out text is kept nowhere


def test_huge_document_is_truncated_and_utf8_repaired(chain):
    row = chain.process({"id": "h", "text": (EN + "\n\n") * 30000})  # ~20 MB
    assert row["truncated"] and len(row["text"]) <= 1_000_000
    cfg = load_config(overrides={**NO_GLOBAL, "input": {"on_too_long": "drop", "max_chars": 1000}})
    assert TextChain(cfg).process({"id": "h", "text": EN * 3})["drop_reason"] == "bad_input:too_long"
    mostly_ok = EN.encode() + b"\xff" + EN2.encode()  # one bad byte in 1000: repaired, not dropped
    assert chain.process({"id": "u", "text": mostly_ok})["drop_reason"] is None


def test_funnel_records_each_stage_in_order(chain):
    stats = ReportStats()
    for page in [{"id": "1", "text": EN + "\n\n" + EN2}, {"id": "2", "text": None}, {"id": "3", "text": SPAM}]:
        funnel(chain, chain.process(page), stats)
    assert list(stats.stages) == chain.stage_names
    assert stats.stages["input"].rows_in == 3 and stats.stages["input"].dropped == {"bad_input:missing_text": 1}
    assert stats.stages["quality"].rows_in == 1


@pytest.mark.parametrize("over,msg", [
    ({"gopher": {"min_wrds": 3}}, "unknown option"),
    ({"stages": ["input", "dedup", "gopher"]}, "must be the last"),
    ({"stages": ["gopher"]}, "must start with `input`"),
    ({"nonsense": 1}, "unknown key"),
    ({"quality": {"top_percent": 10}, "stages": ["input", "quality", "gopher"]}, "right before"),
    ({"quality": {"model": "/nonexistent.ftz"}}, "quality model not found"),
])
def test_config_errors_are_one_clear_line(over, msg):
    with pytest.raises(ConfigError, match=msg):
        TextChain(load_config(overrides=over))


def exploding_classifier(text):  # a safety classifier hook that fails on some input
    if "boom" in text:
        raise ValueError("classifier failed")
    return 0.0


def test_a_failing_filter_drops_one_record_with_a_reason():
    from text_samples import EN2
    chain = TextChain(load_config(overrides={**NO_GLOBAL, "safety": {"classifier": f"{__name__}:exploding_classifier"}}))
    bad = chain.process({"id": "x", "text": EN + " boom\n\n" + EN2})
    assert (bad["drop_stage"], bad["drop_reason"]) == ("safety", "error:safety:ValueError")
    assert bad["quality_score"] is not None            # later stages still scored
    assert chain.process({"id": "y", "text": EN + "\n\n" + EN2})["drop_reason"] is None


def test_control_characters_are_counted_as_the_regex_counts_them():
    import random
    from filters.sanitize import _CONTROL_RE, control_count
    rng = random.Random(11)
    texts = ["", "plain text\twith\nnewlines\r\x0c", "\x00\x01\x0b\x0e\x1f\x7f\x80\x9f", "caf\u00e9\x07\udcff\u2028"]
    texts += ["".join(chr(rng.choice([rng.randrange(0, 0x80), rng.randrange(0x80, 0x800), 0xDC80]))
                      for _ in range(rng.randrange(0, 200))) for _ in range(200)]
    for t in texts:
        assert control_count(t) == len(_CONTROL_RE.findall(t)), repr(t)[:60]


def test_the_sanitiser_judges_utf8_bytes_as_it_judges_their_text():
    # bytes are counted for control characters as they come (no re-encoding): same result as str
    import random
    from filters.sanitize import Sanitizer
    rng = random.Random(5)
    san = Sanitizer(max_chars=300)
    raws = [b"", b"ok\r\nline\x00", b"\xc3(invalid\x07", "caf\u00e9\x01\r".encode(), b"\x00" * 5 + b"text" * 50,
            b"plain\r\ntext " * 20, "na\u00efve caf\u00e9 ".encode() * 30, b"\x00" + b"a" * 400, b"a" * 400 + b"\x00"]
    raws += [bytes(rng.choice([rng.randrange(0, 0x80), rng.randrange(0x80, 0x100), 0x0A, 0x0D, 0x00])
                   for _ in range(rng.randrange(0, 700))) for _ in range(400)]
    seen = set()
    for raw in raws:
        got = san(raw)
        want = san(raw.decode("utf-8", "replace"))
        # a repaired decoding names its junk invalid UTF-8; the decoded text cannot tell, so it says binary
        reason = "bad_input:binary" if got.reason == "bad_input:invalid_utf8" else got.reason
        assert (got.text, reason, got.truncated) == (want.text, want.reason, want.truncated), raw[:40]
        seen.add(got.reason)
    assert {None, "bad_input:binary", "bad_input:invalid_utf8"} <= seen


def test_lone_surrogates_become_replacement_characters_not_a_filter_error():
    """A str from JSON may hold lone surrogates ("\\ud800"); fastText and Arrow refuse them. The
    sanitiser turns them into U+FFFD like invalid bytes: the document is scored, not dropped as an
    error, and its row can be written; a text made mostly of them is invalid UTF-8."""
    import pyarrow as pa

    from filters.sanitize import Sanitizer
    chain = TextChain({"stages": ["input", "langid", "pii", "gopher", "safety"]})
    text = ("The orchard was quiet in the morning and the cider house smelled of apples. " * 12 + "\ud800 "
            + "Pickers came at noon and \udfff the presses ran until night.")
    row = chain.process({"id": "s", "url": "http://x.test/s", "text": text})
    assert row["drop_reason"] is None or not row["drop_reason"].startswith("error"), row["drop_reason"]
    assert "\ud800" not in row["text"] and "\ufffd" in row["text"] and row["language"] == "en"
    pa.array([row["text"]], pa.string())
    assert Sanitizer()("\udc80" * 50 + "text").reason == "bad_input:invalid_utf8"
