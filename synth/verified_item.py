"""The result of generating and verifying one synthetic math or code item.

Both generators return a `VerifiedItem`: the training row when every check passed, or the
reason it was dropped, plus what decontamination compares (`eval_key`) and how long it took.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class VerifiedItem:
    id: str
    row: dict[str, Any] | None          # the training row, when verified
    drop: str | None                    # reason, when not
    process_rows: list[dict[str, Any]] = field(default_factory=list)
    eval_key: str = ""                  # exact-match decontamination key
    seconds: float = 0.0
    sample: dict[str, Any] = field(default_factory=dict)   # what the report shows for a drop
    counters: dict[str, int] = field(default_factory=dict)  # extra report counters


def eval_key(text: str) -> str:
    """Casefolded, whitespace collapsed: two items that differ only in spacing or case match."""
    return re.sub(r"\s+", " ", text.casefold()).strip()
