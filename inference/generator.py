"""The generation API: text, a typed value, or a tool-using answer from one model (and an optional
draft model for speculative decoding, and LoRA adapters chosen per request).

    gen = Generator(model, tokenizer, draft=small_model)
    gen.text("Once upon a time", max_new_tokens=40)          # str
    gen.respond("Describe a person.", Person)                # a Person instance
    gen.respond(prompt, Person, adapter="recovery")          # same, with a LoRA adapter switched on

Every check that can fail before decoding does (schema the engine cannot express, prompt longer
than the context, a budget no valid value fits in, a draft with another tokenizer); a value that
did not finish within the budget raises ``GenerationIncomplete`` with the partial text.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass

from corpus.errors import CidermillError
from inference.adapters import Adapters
from inference.batch import decode_batch
from inference.budget import longest_token_bytes, min_tokens
from inference.constraint import ConstraintEngine
from inference.decode import DecodeStats, Sampling, Session, decode_plain
from inference.prompting import with_response_format
from inference.schema import SchemaError, generation_schema, parse_as
from inference.speculative import decode_speculative
from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
from training.models.config import SequenceTooLongError
from training.quant.packed import load_packed
from training.tokenizer import EOS, TOKENIZER_FILE, load_tokenizer


class GenerationError(CidermillError):
    """A request that cannot be served as asked (refused before decoding)."""


class GenerationIncomplete(CidermillError):
    """The token budget ran out before the value was complete; ``.text`` holds what was generated."""

    def __init__(self, message: str, text: str, stats: DecodeStats):
        super().__init__(message)
        self.text, self.stats = text, stats


@dataclass
class Output:
    text: str
    tokens: list[int]
    stats: DecodeStats
    value: object = None


def tokenizer_sha256(tokenizer) -> str:
    """Identity of a tokenizer: its vocabulary and merges (what decides which id means which bytes)."""
    model = json.loads(tokenizer.to_str())["model"]
    return hashlib.sha256(json.dumps([sorted(model["vocab"].items()), model.get("merges")]).encode()).hexdigest()


class Generator:
    def __init__(self, model, tokenizer, draft=None, draft_tokenizer=None, kv_int8: bool = False,
                 speculative_k: int = 4):
        self.model, self.tokenizer = model.eval(), tokenizer
        self.draft = draft.eval() if draft is not None else None
        self.kv_int8, self.k = kv_int8, speculative_k
        self.eos_id = tokenizer.token_to_id(EOS)
        if tokenizer.get_vocab_size() > model.config.vocab_size:
            raise GenerationError(f"tokenizer has {tokenizer.get_vocab_size()} tokens but model "
                                  f"'{model.config.name}' only {model.config.vocab_size} embeddings")
        if draft is not None:
            if draft_tokenizer is not None and tokenizer_sha256(draft_tokenizer) != tokenizer_sha256(tokenizer):
                raise GenerationError("draft model uses another tokenizer than the target: speculative "
                                      "decoding needs both to mean the same bytes by every token id")
            if draft.config.vocab_size < tokenizer.get_vocab_size():
                raise GenerationError(f"draft model '{draft.config.name}' has {draft.config.vocab_size} "
                                      f"embeddings, fewer than the tokenizer's {tokenizer.get_vocab_size()}")
        self._engine: ConstraintEngine | None = None
        self._longest: int | None = None
        self.adapters = None

    # ---- construction ----------------------------------------------------------------------------
    @classmethod
    def from_checkpoint(cls, checkpoint: str, tokenizer: str | None = None, draft: str | None = None,
                        draft_tokenizer: str | None = None, **kw) -> "Generator":
        model = load_checkpoint_model(checkpoint)
        tok = load_tokenizer(tokenizer or find_tokenizer(checkpoint))
        d_model = d_tok = None
        if draft:
            d_model = load_checkpoint_model(draft)
            d_path = draft_tokenizer or find_tokenizer(draft, missing_ok=True)
            if d_path is None:
                raise GenerationError(f"{draft}: cannot tell which tokenizer the draft uses (no tokenizer.json "
                                      "or training config beside it); pass --draft-tokenizer")
            d_tok = load_tokenizer(d_path)
        return cls(model, tok, d_model, d_tok, **kw)

    def load_adapter(self, path: str, name: str | None = None) -> str:
        if self.adapters is None:
            self.adapters = Adapters(self.model)
        return self.adapters.load(path, name)

    # ---- pieces --------------------------------------------------------------------------------
    @property
    def engine(self) -> ConstraintEngine:
        if self._engine is None:
            self._engine = ConstraintEngine(self.tokenizer, self.model.config.vocab_size)
        return self._engine

    def encode(self, text: str) -> list[int]:
        ids = self.tokenizer.encode(text).ids
        if not ids:
            raise GenerationError("the prompt is empty")
        return ids

    def _check_length(self, n_prompt: int, max_new: int, speculative: bool) -> None:
        ctx = self.model.config.max_seq_len
        if speculative:
            ctx = min(ctx, self.draft.config.max_seq_len)
        extra = self.k + 1 if speculative else 0
        if n_prompt >= ctx:
            raise SequenceTooLongError(f"prompt of {n_prompt} tokens is longer than the context "
                                       f"({ctx} tokens) of the model")
        if n_prompt + max_new + extra > ctx:
            raise SequenceTooLongError(f"prompt ({n_prompt} tokens) + max_new_tokens ({max_new})"
                                       f"{' + speculative lookahead (' + str(extra) + ')' if extra else ''}"
                                       f" = {n_prompt + max_new + extra} exceeds the context of {ctx} tokens")

    def _decode(self, ids, max_new, sampling, constraint, speculative):
        n = len(ids) + max_new + (self.k + 1 if speculative else 0)
        target = Session(self.model, n, self.kv_int8)
        if speculative:
            return decode_speculative(target, Session(self.draft, n, self.kv_int8), ids, max_new, sampling,
                                      self.eos_id, constraint, k=self.k)
        return decode_plain(target, ids, max_new, sampling, self.eos_id, constraint)

    def _adapter(self, name):
        if name is None:
            return contextlib.nullcontext()
        if self.adapters is None:
            raise GenerationError(f"no adapter named {name!r} (none loaded)")
        return self.adapters.active(name)

    # ---- API -----------------------------------------------------------------------------------
    def generate(self, prompt: str, schema: dict | None = None, max_new_tokens: int = 128,
                 temperature: float = 0.0, top_p: float = 1.0, seed: int | None = None,
                 speculative: bool | None = None, adapter: str | None = None) -> Output:
        """Text (``schema=None``) or JSON text under ``schema``; the prompt is used as given."""
        speculative = self.draft is not None if speculative is None else speculative
        if speculative and self.draft is None:
            raise GenerationError("speculative decoding needs a draft model")
        constraint = None
        if schema is not None:
            constraint = self.engine.constraint(schema)
            if self._longest is None:
                self._longest = longest_token_bytes(self.tokenizer)
            need = min_tokens(schema, self._longest)
            if need > max_new_tokens:
                raise GenerationError(f"the schema's shortest value needs at least {need} tokens but "
                                      f"max_new_tokens is {max_new_tokens}: no valid completion fits")
        ids = self.encode(prompt)
        self._check_length(len(ids), max_new_tokens, speculative)
        sampling = Sampling(temperature, top_p, seed)
        with self._adapter(adapter):
            out, stats = self._decode(ids, max_new_tokens, sampling, constraint, speculative)
        return Output(self.tokenizer.decode(out), out, stats)

    def text(self, prompt: str, **kw) -> str:
        return self.generate(prompt, **kw).text

    def respond(self, prompt: str, type_, inject_format: bool = True, max_new_tokens: int = 256, **kw):
        """A value of ``type_`` (dataclass, enum, pydantic model, typing construct, or a JSON Schema
        dict), decoded under its grammar. Raises ``SchemaError`` before decoding when the type
        cannot be expressed, ``GenerationIncomplete`` when the budget ran out first."""
        return self.respond_output(prompt, type_, inject_format, max_new_tokens, **kw).value

    def respond_output(self, prompt: str, type_, inject_format: bool = True, max_new_tokens: int = 256,
                       **kw) -> Output:
        schema = generation_schema(type_)
        full = with_response_format(prompt, schema) if inject_format else prompt
        out = self.generate(full, schema=schema, max_new_tokens=max_new_tokens, **kw)
        if not out.stats.finished:
            raise GenerationIncomplete(f"the value was not complete after {max_new_tokens} tokens "
                                       "(raise max_new_tokens or bound the type's strings and lists)",
                                       out.text, out.stats)
        try:
            out.value = parse_as(type_, out.text)
        except Exception as e:  # noqa: BLE001  a grammar/validator disagreement: report, do not hide
            raise SchemaError(f"output did not validate against the type although the grammar accepted it "
                              f"(a construct the grammar enforces only loosely): {str(e).splitlines()[0]}") from None
        return out


def load_checkpoint_model(path: str):
    """A checkpoint step directory, a training run directory (its latest checkpoint), or a packed
    file from ``cidermill compress`` (dequantised to floats: the base its recovery adapters expect)."""
    if os.path.isfile(path):
        return load_packed(path)[0].eval()
    return load_model_from_checkpoint(checkpoint_dir(path)).eval()


def find_tokenizer(checkpoint: str, missing_ok: bool = False) -> str | None:
    """A tokenizer.json in the checkpoint directory or one of its parents (up to three levels), or
    the tokenizer a training run's config.json names."""
    d = os.path.abspath(checkpoint)
    for _ in range(4):
        for cand in (os.path.join(d, TOKENIZER_FILE), os.path.join(d, "tokenizer", TOKENIZER_FILE)):
            if os.path.exists(cand):
                return cand
        run_config = os.path.join(d, "config.json")  # a training run records data.tokenizer
        if os.path.exists(run_config):
            try:
                with open(run_config) as f:
                    tok = json.load(f)["train"]["data"]["tokenizer"]
                if tok and os.path.exists(tok):
                    return tok
            except (OSError, ValueError, KeyError, TypeError):
                pass
        d = os.path.dirname(d)
    if missing_ok:
        return None
    raise CidermillError(f"{checkpoint}: no tokenizer.json next to the checkpoint; pass --tokenizer")


def respond_many(gen: Generator, prompt: str, type_, seeds: list[int], max_new_tokens: int = 256,
                 temperature: float = 1.0, inject_format: bool = True) -> list:
    """One value of ``type_`` per seed, decoded as one batch. A row whose budget ran out is a
    ``GenerationIncomplete`` in the returned list (the caller decides), never a partial value."""
    schema = generation_schema(type_)
    full = with_response_format(prompt, schema) if inject_format else prompt
    ids = gen.encode(full)
    gen._check_length(len(ids), max_new_tokens, False)
    gen.engine.constraint(schema)  # refuse an inexpressible schema before decoding
    outs, finished = decode_batch(gen.model, gen.engine, schema, ids, seeds, max_new_tokens, temperature, gen.eos_id)
    values = []
    for toks, ok in zip(outs, finished):
        text = gen.tokenizer.decode(toks)
        values.append(parse_as(type_, text) if ok else
                      GenerationIncomplete(f"not complete after {max_new_tokens} tokens", text, DecodeStats()))
    return values
