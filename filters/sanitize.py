"""Bad input, judged before any filter: missing or empty text, invalid UTF-8, binary junk,
oversized documents, and pages the publisher opted out of training.

Returns the repaired text (or None) and a drop reason; never raises on a record's content.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from corpus.errors import ConfigError
from filters.base import check_keys

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")  # what counts as a control character
# every byte but those control characters: their count in a text is the length of its UTF-8 bytes
# with all other bytes deleted (one C pass; the regex scan cost 7 ns per character)
_NOT_CONTROL = bytes(b for b in range(256) if not _CONTROL_RE.match(chr(b)))


def control_count(text: str) -> int:
    """How many characters of `text` match _CONTROL_RE (multibyte characters and lone surrogates
    encode to bytes >= 0x80, never to a control byte)."""
    return control_bytes(text.encode("utf-8", "surrogatepass"))


def control_bytes(utf8: bytes) -> int:
    """How many bytes of `utf8` are control characters of _CONTROL_RE."""
    return len(utf8.translate(None, _NOT_CONTROL))


@dataclass
class Sanitized:
    text: str | None
    reason: str | None = None
    truncated: bool = False
    repaired_utf8: bool = False


class Sanitizer:
    name = "input"
    OPTIONS = {"max_chars", "on_too_long", "max_control_ratio", "max_replacement_ratio", "min_chars",
               "respect_training_allowed", "respect_noindex"}

    def __init__(self, max_chars: int = 1_000_000, on_too_long: str = "truncate", max_control_ratio: float = 0.01,
                 max_replacement_ratio: float = 0.01, min_chars: int = 1, respect_training_allowed: bool = True,
                 respect_noindex: bool = True):
        if on_too_long not in ("truncate", "drop"):
            raise ConfigError(f"input.on_too_long must be 'truncate' or 'drop', got {on_too_long!r}")
        self.max_chars, self.on_too_long = int(max_chars), on_too_long
        self.max_control_ratio, self.max_replacement_ratio = float(max_control_ratio), float(max_replacement_ratio)
        self.min_chars = int(min_chars)
        self.respect_training_allowed, self.respect_noindex = respect_training_allowed, respect_noindex

    @classmethod
    def from_config(cls, cfg: dict) -> "Sanitizer":
        check_keys(cls.name, cfg, cls.OPTIONS)
        return cls(**cfg)

    def opt_out(self, row: dict[str, Any]) -> str | None:
        if self.respect_training_allowed and row.get("training_allowed") is False:
            return "opt_out:training_not_allowed"
        if self.respect_noindex and row.get("robots_noindex") is True:
            return "opt_out:noindex"
        return None

    def __call__(self, raw: Any) -> Sanitized:
        if raw is None:
            return Sanitized(None, "bad_input:missing_text")
        repaired = False
        if isinstance(raw, (bytes, bytearray, memoryview)):
            raw = bytes(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", "replace")
                repaired = True
        elif isinstance(raw, str):
            text = raw
            if not text.isascii():
                # lone surrogates (a JSON "\\ud800"): no UTF-8 holds them, so neither fastText nor an
                # Arrow shard could take the text; they become U+FFFD, as invalid bytes do
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    text = _SURROGATE.sub(REPLACEMENT, text)
                    repaired = True
        else:
            return Sanitized(None, "bad_input:text_not_a_string")
        truncated = False
        if len(text) > self.max_chars:
            if self.on_too_long == "drop":
                return Sanitized(text[:1000], "bad_input:too_long")
            text, truncated = text[: self.max_chars], True
        # judge junk on a prefix: enough to tell, cheap on huge inputs
        probe = text[:100_000]
        n = max(len(probe), 1)
        if probe.count(REPLACEMENT) / n > self.max_replacement_ratio:
            return Sanitized(text[:1000], "bad_input:invalid_utf8" if repaired else "bad_input:binary", truncated, repaired)
        # control characters are control bytes of the UTF-8 (decoding keeps bytes < 0x80 as they are)
        whole = isinstance(raw, bytes) and not truncated and len(text) <= 100_000  # raw is probe's UTF-8
        control = control_bytes(raw) if whole else control_count(probe)
        if control / n > self.max_control_ratio:
            return Sanitized(text[:1000], "bad_input:binary", truncated, repaired)
        if "\r" in text or "\x00" in text:
            text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
        if len(text.strip()) < self.min_chars:
            return Sanitized(text, "bad_input:empty", truncated, repaired)
        return Sanitized(text, None, truncated, repaired)
