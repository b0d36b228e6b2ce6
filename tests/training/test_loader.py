"""Packed, mixed, rank-split, exactly resumable loading of token shards."""
import numpy as np
import pyarrow as pa
import pytest

from corpus.errors import ConfigError, ShardError
from corpus.manifest import read_manifest
from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from training.data.loader import IGNORE, PackedLoader
from training.data.token_source import TokenSource


def _tokens(tmp_path, name, n_docs, base, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_docs):
        n = int(rng.integers(3, 60))
        toks = (base + (i * 1000) + np.arange(n)).astype(np.uint32).tolist()  # doc i's tokens are unique
        rows.append({"doc_id": f"{name}-{i}", "tokens": toks, "source": name, "mixture": name})
    d = str(tmp_path / name)
    write_dataset(d, "tokens", pa.Table.from_pylist(rows, schema=TOKENS), target_bytes=4000)
    return d


@pytest.fixture
def mix(tmp_path):
    a = _tokens(tmp_path, "web", 300, 0)
    b = _tokens(tmp_path, "code", 100, 10_000_000, seed=1)
    return a, b


def _loader(a, b, **kw):
    args = dict(seq_len=32, batch_size=4, seed=7)
    args.update(kw)
    return PackedLoader([("web", TokenSource(a), 0.75), ("code", TokenSource(b), 0.25)], **args)


def test_deterministic_and_boundaries(mix):
    a, b = mix
    x, y = _loader(a, b), _loader(a, b)
    for _ in range(5):
        bx, by = x.next_batch(), y.next_batch()
        assert all((bx[k] == by[k]).all() for k in ("input_ids", "targets", "doc_ids"))
    batch = x.next_batch()
    ids, tg, doc = batch["input_ids"].numpy(), batch["targets"].numpy(), batch["doc_ids"].numpy()
    # within a document segment the target is the next token of the same document (consecutive ids here)
    same = (tg != IGNORE)
    assert (tg[:, :-1][same[:, :-1]] == ids[:, 1:][same[:, :-1]]).all()
    # tokens of one document id (i*1000 + k) never share a doc segment with another document
    for r in range(ids.shape[0]):
        for seg in np.unique(doc[r]):
            docs_in_seg = np.unique(ids[r][doc[r] == seg] // 1000)
            assert len(docs_in_seg) == 1
    # masked targets are exactly the positions where the next token starts a new segment
    assert (tg == IGNORE).sum() > 0


def test_mixture_weights(mix):
    a, b = mix
    ld = _loader(a, b, batch_size=50)
    srcs = sum((ld.next_batch()["sources"] for _ in range(20)), [])
    frac = srcs.count("web") / len(srcs)
    assert 0.68 < frac < 0.82


def test_ranks_disjoint_and_cover_the_stream(mix):
    a, b = mix
    single = _loader(a, b, batch_size=1)
    stream = [single.next_batch()["input_ids"].numpy()[0] for _ in range(12)]
    r0, r1 = _loader(a, b, batch_size=1, rank=0, world_size=2), _loader(a, b, batch_size=1, rank=1, world_size=2)
    got0 = [r0.next_batch()["input_ids"].numpy()[0] for _ in range(6)]
    got1 = [r1.next_batch()["input_ids"].numpy()[0] for _ in range(6)]
    assert all((s == g).all() for s, g in zip(stream[0::2], got0))
    assert all((s == g).all() for s, g in zip(stream[1::2], got1))


def test_exact_resume(mix):
    a, b = mix
    full = _loader(a, b)
    ref = [full.next_batch()["input_ids"] for _ in range(40)]  # several epochs of `code`
    part = _loader(a, b)
    for _ in range(17):
        part.next_batch()
    state = part.state_dict()
    resumed = _loader(a, b)
    resumed.load_state_dict(state)
    for i in range(17, 40):
        assert (resumed.next_batch()["input_ids"] == ref[i]).all()
    with pytest.raises(ConfigError):
        _loader(a, b, seed=8).load_state_dict(state)


def test_holdout_split_is_disjoint(mix):
    a, _ = mix
    tr, ev = TokenSource(a, holdout_permille=200), TokenSource(a, holdout_permille=200, split="eval")
    assert tr.num_docs + ev.num_docs == 300 and ev.num_docs > 20
    tr_docs = {int(tr.doc_tokens(i)[0]) // 1000 for i in range(tr.num_docs)}
    ev_docs = {int(ev.doc_tokens(i)[0]) // 1000 for i in range(ev.num_docs)}
    assert not tr_docs & ev_docs


def test_corrupt_shard_named_before_training(mix):
    a, _ = mix
    shard = read_manifest(a).shards[1].path
    with open(f"{a}/{shard}", "r+b") as f:
        f.truncate(100)
    with pytest.raises(ShardError, match=shard):
        TokenSource(a)
