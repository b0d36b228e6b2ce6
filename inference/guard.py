"""Input and output guardrails: the project's safety filter on the prompt and on the generated
text, with a typed refusal instead of the output when either fails.

The check is ``filters.safety.Safety`` (word lists, density threshold, optional classifier hook)
applied to one document, the same decision the text pipeline takes on a crawled page, so a
reviewer reads one rule set for both. A refused output is withheld, never returned partially.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from filters.base import Doc
from filters.safety import Safety


@dataclass(frozen=True)
class Refusal:
    stage: str                  # "input" (the prompt) or "output" (the generated text)
    reason: str                 # the safety filter's drop reason, e.g. "safety:unsafe_words"
    scores: dict

    def to_json(self) -> dict:
        return {"refusal": asdict(self)}


class Guard:
    def __init__(self, safety: Safety | None = None, language: str | None = None):
        self.safety = safety or Safety()
        self.language = language

    def check(self, text: str, stage: str) -> Refusal | None:
        scores, keep, reason = self.safety(Doc(id=stage, text=text, language=self.language))
        return None if keep else Refusal(stage, reason or "safety", scores)
