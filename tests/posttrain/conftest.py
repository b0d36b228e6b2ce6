"""A small byte-level BPE with the chat markers, and a micro dense model sized to it."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from training.models import build_model, get_preset
from training.posttrain.chat import add_chat_tokens
from training.tokenizer import train_tokenizer

TEXT = ["What is the sum of the Sales column? The answer is 42.",
        '{"answer": "Oslo"} {"calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}',
        "Summarise the document in one sentence. The cider mill presses apples in autumn.",
        "Quelle est la capitale? Réponds en français. Le moulin presse les pommes."] * 20


@pytest.fixture(scope="session")
def base_tokenizer():
    return train_tokenizer(TEXT, 400)


@pytest.fixture(scope="session")
def chat_tokenizer(base_tokenizer):
    return add_chat_tokens(base_tokenizer)


def micro_model(vocab: int, seed: int = 0, **over):
    kw = dict(vocab_size=vocab, d_model=32, n_layers=2, n_heads=2, n_kv_heads=1, ffn_hidden=64, max_seq_len=128)
    cfg = dataclasses.replace(get_preset("tiny"), **{**kw, **over})
    torch.manual_seed(seed)
    m = build_model(cfg)
    m.init_weights()
    return m
