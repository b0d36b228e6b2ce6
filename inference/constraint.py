"""Constrained decoding over the project's byte-level BPE, with llguidance as the masking engine.

llguidance was chosen over xgrammar and outlines-core after measuring all three on this tokenizer
(bench/constraint_engines.py): it compiles a schema in about a millisecond, computes a mask in tens
of microseconds, and accepted no invalid instance in the soundness suite; the schemas it refuses
are refused with a message naming the construct (``SchemaError``).

    engine = ConstraintEngine(tokenizer)           # once per tokenizer
    c = engine.constraint(schema)                  # one per request (cheap)
    allowed = c.allowed()                          # bool [vocab]; EOS allowed once the JSON is complete
    c.advance(token); c.rollback(n); c.finished

JSON is generated compact (no free whitespace: a model cannot pad the output forever).
"""
from __future__ import annotations

import json

import torch

from inference.errors import SchemaError

JSON_OPTIONS = {"whitespace_flexible": False}


def _grammar(schema: dict) -> str:
    import llguidance  # noqa: PLC0415  (lazy: only guided generation needs it)
    return llguidance.LLMatcher.grammar_from_json_schema(json.dumps(schema), defaults=JSON_OPTIONS)


def check_expressible(schema: dict, what: str = "schema") -> None:
    """Raise ``SchemaError`` naming the construct when llguidance cannot enforce ``schema``."""
    import llguidance  # noqa: PLC0415  (lazy: only guided generation needs it)
    is_error, msgs = llguidance.LLMatcher.validate_grammar_with_warnings(_grammar(schema))
    if is_error:
        raise SchemaError(f"{what}: the constrained decoder cannot express this schema: {_first_line(msgs[0])}")


def _first_line(msg: str) -> str:
    lines = [l.strip() for l in str(msg).splitlines() if l.strip()]
    return lines[0] if lines else "unknown error"


class ConstraintEngine:
    """The tokenizer as llguidance sees it (built once: every token's bytes), for ``vocab_size``
    logits (a model may have more rows than the tokenizer has tokens: those are never allowed)."""

    def __init__(self, tokenizer, vocab_size: int | None = None, eos_token: str = "<|endoftext|>"):
        import llguidance  # noqa: PLC0415  (lazy: only guided generation needs it)
        eos = tokenizer.token_to_id(eos_token)
        if eos is None:
            raise SchemaError(f"tokenizer has no end-of-text token {eos_token!r}")
        self.eos_id = eos
        self.tokenizer = tokenizer
        self.ll = llguidance.LLTokenizer(tokenizer.to_str(), eos_token=eos)
        self.n_tok = self.ll.vocab_size
        self.vocab_size = vocab_size or self.n_tok
        if self.vocab_size < self.n_tok:
            raise SchemaError(f"model vocabulary ({self.vocab_size}) is smaller than the tokenizer's ({self.n_tok})")
        self._bits = torch.arange(32, dtype=torch.int32)

    def constraint(self, schema: dict, what: str = "schema") -> "Constraint":
        import llguidance  # noqa: PLC0415  (lazy: only guided generation needs it)
        matcher = llguidance.LLMatcher(self.ll, _grammar(schema), log_level=0)
        if matcher.is_error():
            raise SchemaError(f"{what}: the constrained decoder cannot express this schema: "
                              f"{_first_line(matcher.get_error())}")
        return Constraint(self, matcher)


class Constraint:
    """One request's grammar state: which tokens may come next, advanced token by token."""

    def __init__(self, engine: ConstraintEngine, matcher):
        self.engine, self.matcher = engine, matcher
        self._words = torch.zeros((engine.n_tok + 31) // 32, dtype=torch.int32)

    def allowed(self) -> torch.Tensor:
        """Bool ``[vocab_size]``: the tokens the grammar accepts next (EOS once the value is complete)."""
        e = self.engine
        self.matcher.unsafe_compute_mask_ptr(self._words.data_ptr(), self._words.numel() * 4)
        bits = ((self._words.unsqueeze(-1) >> e._bits) & 1).view(-1)[: e.n_tok].bool()
        if e.vocab_size > e.n_tok:
            bits = torch.cat([bits, bits.new_zeros(e.vocab_size - e.n_tok)])
        return bits

    def advance(self, token: int) -> None:
        if not self.matcher.consume_token(int(token)):
            raise RuntimeError(f"constraint refused token {token}: {self.matcher.get_error()}")

    def rollback(self, n: int) -> None:
        if n and not self.matcher.rollback(n):
            raise RuntimeError(f"constraint cannot roll back {n} tokens: {self.matcher.get_error()}")

    @property
    def finished(self) -> bool:
        """The grammar allows nothing but end of text."""
        return self.matcher.is_stopped()

    @property
    def accepting(self) -> bool:
        return self.matcher.is_accepting()
