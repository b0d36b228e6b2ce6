"""Byte-level BPE tokenizer (Hugging Face `tokenizers`): training and vocabulary extension.

Byte-level pre-tokenisation maps every byte to one of 256 base symbols, all in the vocabulary,
so no text is ever unknown (the byte fallback). Digits are split one by one, as in most modern
LLM tokenizers, so numbers tokenize consistently.

Extension (`extend_tokenizer`) learns merges on new data (e.g. a new language) and appends the
new tokens after the old ones: every old token keeps its id, like the report's 100k -> 150k step.
"""
from __future__ import annotations

import json
import os
from typing import Iterable, Iterator

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from corpus.errors import CidermillError
from corpus.reader import open_dataset

SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>"]
EOS = "<|endoftext|>"
TOKENIZER_FILE = "tokenizer.json"


def _pre_tokenizer():
    return pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])


def new_bpe_tokenizer():
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False))
    tok.pre_tokenizer = _pre_tokenizer()
    tok.decoder = decoders.ByteLevel()
    return tok


def train_tokenizer(texts: Iterable[str], vocab_size: int, show_progress: bool = False):
    """Train a byte-level BPE of `vocab_size` tokens (base bytes + specials + merges)."""
    if vocab_size < 256 + len(SPECIAL_TOKENS) + 1:
        raise CidermillError(f"--vocab {vocab_size} is too small: byte-level BPE needs at least "
                             f"{256 + len(SPECIAL_TOKENS) + 1} (256 bytes + special tokens + merges)")
    tok = new_bpe_tokenizer()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=show_progress,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=2)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def save_tokenizer(tok, out_dir: str, meta: dict | None = None) -> str:
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, TOKENIZER_FILE)
    tmp = path + ".tmp"
    tok.save(tmp)
    os.replace(tmp, path)
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump({"vocab_size": tok.get_vocab_size(), "eos": EOS, "eos_id": tok.token_to_id(EOS), **(meta or {})},
                  f, indent=1)
    return path


def tokenizer_file(path: str) -> str:
    """The json file a tokenizer directory (tokenizer.json inside) or the file itself names."""
    return os.path.join(path, TOKENIZER_FILE) if os.path.isdir(path) else path


def load_tokenizer(path: str):
    """Load from a tokenizer directory (tokenizer.json inside) or the json file itself."""
    file = tokenizer_file(path)
    if not os.path.exists(file):
        raise CidermillError(f"{file}: no tokenizer here (train one with `cidermill tokenizer train`)")
    try:
        return Tokenizer.from_file(file)
    except Exception as e:  # noqa: BLE001  tokenizers raises plain Exception on bad files
        raise CidermillError(f"{file}: unreadable tokenizer ({e})") from None


def _bpe_state(tok) -> tuple[dict[str, int], list[tuple[str, str]]]:
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return dict(model["vocab"]), merges  # type: ignore[return-value]


def extend_tokenizer(base, texts: Iterable[str], add: int, show_progress: bool = False):
    """Return (extended tokenizer, list of new tokens). Old ids are unchanged; new ids follow.

    Merges are learned on the new data alone; the first `add` merges whose result is not already
    a token are appended (in learned order, so each new merge's parts exist when it applies).
    """
    if add <= 0:
        raise CidermillError("--add must be positive")
    vocab, merges = _bpe_state(base)
    learner = train_tokenizer(texts, vocab_size=len(vocab) + add * 4 + 300, show_progress=show_progress)
    _, new_merges = _bpe_state(learner)
    next_id = max(vocab.values()) + 1
    new_tokens: list[str] = []
    merge_set = set(merges)
    for a, b in new_merges:
        if len(new_tokens) >= add:
            break
        tok = a + b
        if a not in vocab or b not in vocab:
            continue
        if (a, b) not in merge_set:
            merges.append((a, b))
            merge_set.add((a, b))
        if tok not in vocab:
            vocab[tok] = next_id
            next_id += 1
            new_tokens.append(tok)
    obj = json.loads(base.to_str())
    obj["model"]["vocab"] = vocab
    obj["model"]["merges"] = [[a, b] for a, b in merges]
    ext = Tokenizer.from_str(json.dumps(obj))
    return ext, new_tokens


def token_pieces(base, token: str) -> list[int]:
    """Ids of `token` (a byte-level token string) under the base tokenizer: its old pieces."""
    # The token is already in byte-level symbols: run the base BPE model on it directly (decoding
    # to text first would break tokens that hold part of a multi-byte character).
    return [t.id for t in base.model.tokenize(token)]


def iter_texts(dataset_dir: str, column: str = "text", limit: int | None = None) -> Iterator[str]:
    ds = open_dataset(dataset_dir)
    if column not in ds.schema.names:
        raise CidermillError(f"{dataset_dir}: no `{column}` column (columns: {ds.schema.names})")
    n = 0
    for batch in ds.iter_batches([column]):
        for t in batch.column(0).to_pylist():
            if t:
                yield t
                n += 1
                if limit and n >= limit:
                    return
