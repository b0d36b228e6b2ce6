"""Long context: bucket packing with document masks, sentence-boundary splits, the memory-bounded
attention and cross-entropy against their references, activation checkpointing."""
import dataclasses

import numpy as np
import pyarrow as pa
import pytest
import torch

from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from training.data.buckets import BucketLoader, pack_first_fit, split_at_sentences
from training.data.loader import IGNORE
from training.data.token_source import TokenSource
from training.kernels import reference as ref
from training.kernels.linear_ce_chunked import linear_cross_entropy as chunked_ce
from training.kernels.long_attention import attention as long_attention
from training.models import build_model, get_preset

DOT = 9   # the "sentence end" token of the synthetic documents


@pytest.fixture(scope="module")
def long_docs(tmp_path_factory):
    rng = np.random.default_rng(0)
    rows = []
    for i, n in enumerate([5, 12, 30, 31, 60, 64, 100, 200, 7, 17, 40, 250]):
        toks = rng.integers(10, 200, n)
        toks[::11] = DOT
        rows.append({"doc_id": f"d{i}", "tokens": [int(t) for t in toks] + [1], "source": "s", "mixture": "s"})
    d = str(tmp_path_factory.mktemp("long") / "tokens")
    write_dataset(d, "tokens", pa.Table.from_pylist(rows, schema=TOKENS), target_bytes=4000)
    return d


def test_split_at_sentences_and_first_fit():
    toks = np.array([5, 9, 5, 5, 9, 5, 5, 5, 5, 5, 9, 5])
    assert split_at_sentences(toks, 6, np.array([9])) == ([5, 6, 1], "sentence")   # cuts after each 9
    assert split_at_sentences(toks, 3, np.array([9]))[1] == "hard"
    bins = pack_first_fit([5, 3, 4, 2, 1], 6)
    assert sorted(i for b in bins for i in b) == [0, 1, 2, 3, 4]
    assert all(sum([5, 3, 4, 2, 1][i] for i in b) <= 6 for b in bins) and len(bins) == 3


def test_bucket_rows_hold_whole_documents_once_with_masks(long_docs):
    src = TokenSource(long_docs)
    ld = BucketLoader([("s", src, 1.0)], [32, 64, 128], tokens_per_batch=128, seed=3, sentence_end_ids=[DOT])
    # the documents longer than 128 were split at sentence ends (after a DOT) and recorded
    assert sorted(r["length"] for r in ld.splits) == [201, 251]
    for r in ld.splits:
        assert max(r["pieces"]) <= 128 and sum(r["pieces"]) == r["length"] and r["cut"] == "sentence"
        toks = src.doc_tokens(r["doc"])
        assert all(toks[c - 1] == DOT for c in np.cumsum(r["pieces"])[:-1])
    # one epoch of every bucket: each document token appears exactly once, contiguous, masked
    want = sorted(int(t) for d in range(src.num_docs) for t in src.doc_tokens(d))
    got = []
    rows = sum(len(b.rows) for b in ld.tables[0])
    for bucket in ld.tables[0]:
        for _ in range(len(bucket.rows)):
            ids, tgt, doc, real = ld._row(0, bucket)
            got += ids[:real].tolist()
            assert (tgt[real:] == IGNORE).all() and len(set(doc[real:].tolist())) <= 1
            for k in np.unique(doc[:real]):
                idx = np.nonzero(doc == k)[0]
                assert (np.diff(idx) == 1).all()                         # a document is one run
                assert tgt[idx[-1]] == IGNORE                             # its last token predicts nothing
                assert (tgt[idx[:-1]] == ids[idx[1:]]).all()
    assert sorted(got) == want and rows > 0
    # resume: a loader restored from a state dict yields the same batches
    for _ in range(3):
        ld.next_batch()
    state = ld.state_dict()
    a = [ld.next_batch() for _ in range(4)]
    ld2 = BucketLoader([("s", src, 1.0)], [32, 64, 128], tokens_per_batch=128, seed=3, sentence_end_ids=[DOT])
    ld2.load_state_dict(state)
    b = [ld2.next_batch() for _ in range(4)]
    assert all(torch.equal(x["input_ids"], y["input_ids"]) for x, y in zip(a, b)) and ld.seen == ld2.seen


def test_packed_long_rows_never_attend_across_documents(long_docs):
    """The logits of every document in a packed row equal those of the document alone."""
    torch.manual_seed(0)
    cfg = dataclasses.replace(get_preset("tiny"), vocab_size=256, n_layers=2, max_seq_len=128)
    model = build_model(cfg).eval()
    ld = BucketLoader([("s", TokenSource(long_docs), 1.0)], [64, 128], tokens_per_batch=128, seed=0,
                      sentence_end_ids=[DOT])
    b = ld.next_batch()
    ids, doc = b["input_ids"][:1], b["doc_ids"][:1]
    with torch.no_grad():
        packed = model(ids, doc_ids=doc).logits[0]
        for k in doc[0].unique():
            idx = (doc[0] == k).nonzero().squeeze(1)
            alone = model(ids[:, idx]).logits[0]
            assert torch.allclose(packed[idx], alone, atol=1e-5)


@pytest.mark.parametrize("window,tq,docs", [(None, 300, False), (None, 300, True), (40, 300, True),
                                            (None, 70, False), (40, 70, False), (None, 1, False)])
def test_long_attention_matches_reference_values_and_grads(window, tq, docs):
    g = torch.Generator().manual_seed(1)
    tk = 300
    q = torch.randn(2, 4, tq, 16, generator=g, requires_grad=True)
    k = torch.randn(2, 2, tk, 16, generator=g, requires_grad=True)
    v = torch.randn(2, 2, tk, 16, generator=g, requires_grad=True)
    doc_ids = torch.tensor([[0] * 100 + [1] * 150 + [2] * 50, [0] * 7 + [1] * 293]) if docs else None
    outs = []
    for fn in (ref.attention, lambda *a: long_attention(*a, chunk=64)):
        y = fn(q, k, v, True, window, doc_ids, None)
        grads = torch.autograd.grad((y * torch.linspace(-1, 1, y.shape[-1])).sum(), (q, k, v))
        outs.append((y, grads))
    (y0, g0), (y1, g1) = outs
    assert torch.allclose(y0, y1, atol=1e-5)
    assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(g0, g1))


def test_chunked_linear_ce_matches_reference():
    g = torch.Generator().manual_seed(2)
    h = torch.randn(70, 24, generator=g, requires_grad=True)
    w = torch.randn(50, 24, generator=g, requires_grad=True)
    t = torch.randint(0, 50, (70,), generator=g)
    t[::7] = -100
    l0 = ref.linear_cross_entropy(h, w, t)
    g0 = torch.autograd.grad(l0 * 3, (h, w))
    l1 = chunked_ce(h, w, t, rows=16)
    g1 = torch.autograd.grad(l1 * 3, (h, w))
    assert torch.allclose(l0, l1, atol=1e-5)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(g0, g1))


def test_activation_checkpointing_keeps_the_gradients():
    torch.manual_seed(0)
    cfg = dataclasses.replace(get_preset("ondevice-tiny"), vocab_size=128, max_seq_len=64)
    model = build_model(cfg)
    ids = torch.randint(0, 128, (2, 40))
    doc = torch.tensor([[0] * 15 + [1] * 25, [0] * 40])
    grads = []
    for on in (False, True):
        model.set_activation_checkpointing(on)
        model.zero_grad()
        model(ids, targets=ids.roll(-1, 1), doc_ids=doc).loss.backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(*grads))


def test_retrieval_probes_hold_their_answer_once_and_are_reproducible():
    from training.data import retrieval_tasks as rt
    for i in range(20):
        p = rt.make_probe(128, i, pairs=4)
        assert len(p.tokens) == 128 and p.tokens[-2] == rt.QUERY
        k = p.tokens[-1]
        at = [j for j in range(len(p.tokens) - 2) if p.tokens[j] == rt.KEY and p.tokens[j + 1] == k]
        assert at == [p.needle_at] and p.tokens[p.needle_at + 2] == p.answer
        assert (p.tokens == rt.make_probe(128, i, pairs=4).tokens).all()
    assert not (rt.make_probe(128, 0).tokens == rt.make_probe(128, 1).tokens).all()
