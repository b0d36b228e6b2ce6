"""Turn a pretrained checkpoint into a chat model, and find a post-training run's pieces."""
from __future__ import annotations

import dataclasses
import os

from corpus.errors import CidermillError
from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
from training.posttrain.chat import CHAT_TOKENS, add_chat_tokens, prepare_chat_model
from training.tokenizer import load_tokenizer, save_tokenizer


def chat_model(init: str, tokenizer: str, max_seq_len: int | None = None):
    """(model, chat tokenizer): the checkpoint's model with the chat markers added to its
    tokenizer and its embedding grown for them (a no-op when both have them already)."""
    model = load_model_from_checkpoint(checkpoint_dir(init))
    if max_seq_len and max_seq_len != model.config.max_seq_len:
        model.config = dataclasses.replace(model.config, max_seq_len=max_seq_len)
    base = load_tokenizer(tokenizer)
    tok, new = add_chat_tokens(base)
    if new:
        prepare_chat_model(model, base, tok, new)
    if tok.get_vocab_size() > model.config.vocab_size:
        raise CidermillError(f"tokenizer has {tok.get_vocab_size()} tokens, model only {model.config.vocab_size}")
    return model, tok


def save_chat_tokenizer(tok, run_dir: str) -> str:
    return save_tokenizer(tok, os.path.join(run_dir, "tokenizer"), {"chat_tokens": CHAT_TOKENS})
