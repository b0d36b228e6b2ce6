"""Where the lines of one text start, found once per text, and facts about a line worked out once.

PII detectors look at the line a match sits on (a mail header's field name, whether an address is
alone on its line). Scanning back for the newline, or reading the line, at every match made a long
line of matches cost the square of its length; with this index a match finds its line by bisection
and a fact about a line is computed for its first match only. One index serves every detector of a
text (filters/pii.py builds it; nothing is scanned until a detector asks).
"""
from __future__ import annotations

import bisect
import re
from typing import Any, Callable

_NEWLINE = re.compile(r"\n")


class TextLines:
    def __init__(self, text: str):
        self.text = text
        self._starts: list[int] | None = None
        self._memo: dict[Any, Any] = {}

    @property
    def starts(self) -> list[int]:
        """Offsets where the lines begin (0, and one past every newline)."""
        if self._starts is None:
            self._starts = [0] + [m.end() for m in _NEWLINE.finditer(self.text)]
        return self._starts

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos) - 1

    def end(self, k: int) -> int:
        """Where line k's text ends (its newline, or the end of the text)."""
        starts = self.starts
        return starts[k + 1] - 1 if k + 1 < len(starts) else len(self.text)

    def once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """`compute()` the first time `key` is asked for, the stored value after (a fact per line)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]
