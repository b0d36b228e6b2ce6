"""ExactDedup / NearDedup / ConnectedComponents Beam transforms on generated near-duplicates."""
import json
import random

import apache_beam as beam
import numpy as np
import pytest

from filters.dedup_cluster import near_dedup_in_memory
from filters.dedup_text import jaccard, shingle_hashes, word_ngrams, words_of
from filters.minhash_signature import MinHasher, signature_jaccard
from pipelines.beam_options import pipeline_options
from pipelines.dedup import ConnectedComponents, ExactDedup, NearDedup

FIELDS = ("dedup_cluster", "dedup_cluster_size", "dedup_keep", "dedup_reason")


def _run(tmp_path, build, rows, beam_args=(), name="out.json"):
    path = tmp_path / name

    def _write(items):
        dump = lambda x: json.dumps(x, default=repr)  # noqa: E731  (bytes texts of junk rows)
        path.write_text(dump(sorted(items, key=dump)))

    with beam.Pipeline(options=pipeline_options(list(beam_args))) as p:
        build(p | beam.Create(rows)) | "ToList" >> beam.combiners.ToList() | "Write" >> beam.Map(_write)
    return json.loads(path.read_text())


def _by_id(out):
    return {r["id"]: r for r in out}


def _mutate(rng, words, n):
    w = list(words)
    for i in rng.sample(range(len(w)), n):
        w[i] = f"m{rng.randrange(10**7)}"
    return w


def _corpus(seed=0, groups=25):
    """Originals, near copies (a few substituted words), exact copies with other case/punctuation,
    a transitive chain A~B~C with A !~ C, and empty/missing texts."""
    rng = random.Random(seed)
    rows = []
    for g in range(groups):
        base = [f"w{rng.randrange(50000)}" for _ in range(150)]
        rows.append({"id": f"g{g:02d}-0", "text": " ".join(base)})
        if g % 2 == 0:
            rows.append({"id": f"g{g:02d}-1", "text": " ".join(_mutate(rng, base, 1))})
        if g % 5 == 0:
            rows.append({"id": f"g{g:02d}-2", "text": " ".join(base).upper() + " !!!"})
    a = [f"c{rng.randrange(50000)}" for _ in range(1000)]
    b = list(a)
    b[:70] = [f"b{i}" for i in range(70)]  # B differs from A at the start ...
    c = list(b)
    c[-70:] = [f"c{i}" for i in range(70)]  # ... and C from B at the end: A ~ B ~ C, A !~ C
    rows += [{"id": "chain-a", "text": " ".join(a)}, {"id": "chain-b", "text": " ".join(b)},
             {"id": "chain-c", "text": " ".join(c)}]
    rows += [{"id": "empty-1", "text": ""}, {"id": "empty-2", "text": "  ... "}, {"id": "missing"},
             {"id": "bytes", "text": b"\xff\xfe binary"}, {"id": "number", "text": 12345}]
    return rows


def test_exact_dedup_marks_duplicates_and_passes_empty_rows(tmp_path):
    rows = [{"id": "b", "text": "Same words here."}, {"id": "a", "text": "same words HERE"},
            {"id": "c", "text": "same words here"}, {"id": "d", "text": "different"},
            {"id": "e1", "text": ""}, {"id": "e2", "text": None}, {"id": "e3"}]
    out = _by_id(_run(tmp_path, lambda pc: pc | ExactDedup(), rows))
    assert len(out) == 7
    assert [out[k]["dedup_keep"] for k in "abcd"] == [True, False, False, True]
    assert out["b"]["dedup_cluster"] == "a" and out["b"]["dedup_cluster_size"] == 3
    assert out["c"]["dedup_reason"] == "exact_duplicate" and out["a"]["dedup_reason"] is None
    for k in ("e1", "e2", "e3"):
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == (k, 1, True)


def test_chain_fixture_needs_transitivity():
    rows = {r["id"]: words_of(r["text"]) for r in _corpus() if r["id"].startswith("chain")}
    hasher = MinHasher(128, 1)
    sa, sb, sc = hasher.signatures([shingle_hashes(rows[k]) for k in ("chain-a", "chain-b", "chain-c")])
    assert signature_jaccard(sa, sb) >= 0.8 and signature_jaccard(sb, sc) >= 0.8
    assert signature_jaccard(sa, sc) < 0.8
    assert jaccard(word_ngrams(rows["chain-a"]), word_ngrams(rows["chain-c"])) < 0.8


def test_near_dedup_clusters_transitively_and_matches_in_memory_reference(tmp_path):
    rows = _corpus()
    out = _by_id(_run(tmp_path, lambda pc: pc | "Exact" >> ExactDedup() | "Near" >> NearDedup(), rows))
    assert len(out) == len(rows)
    chain = [out[f"chain-{x}"] for x in "abc"]
    assert [r["dedup_cluster"] for r in chain] == ["chain-a"] * 3 and chain[0]["dedup_cluster_size"] == 3
    assert [r["dedup_keep"] for r in chain] == [True, False, False]
    assert out["g00-1"]["dedup_reason"] == "near_duplicate" and out["g00-1"]["dedup_cluster"] == "g00-0"
    assert out["g00-2"]["dedup_reason"] == "exact_duplicate"  # kept from ExactDedup, near cluster wins
    assert out["g00-2"]["dedup_cluster_size"] == 3 and out["g01-0"]["dedup_cluster_size"] == 1
    for k in ("empty-1", "empty-2", "missing", "bytes", "number"):
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == (k, 1, True)
    ref, _ = near_dedup_in_memory((r["id"], r.get("text")) for r in rows)
    for k, m in ref.items():
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == \
            (m.cluster, m.cluster_size, m.keep), k


def test_connected_components_long_path_converges_or_falls_back(tmp_path):
    rng = random.Random(5)
    nodes = [f"n{rng.randrange(10**6):06d}-{i}" for i in range(60)]  # a path in random key order
    edges = list(zip(nodes, nodes[1:])) + [("x1", "x2"), ("x3", "x2")]
    for rounds, name in ((1, "fallback.json"), (8, "stars.json")):
        out = dict(_run(tmp_path, lambda pc, r=rounds: pc | ConnectedComponents(max_rounds=r), edges, name=name))
        assert out == {**{n: min(nodes) for n in nodes}, "x1": "x1", "x2": "x1", "x3": "x1"}


@pytest.mark.slow
def test_near_dedup_same_result_with_two_worker_processes(tmp_path):
    rows = _corpus(seed=1, groups=12)
    build = lambda pc: pc | ExactDedup() | NearDedup(bands=16, rows=8)  # noqa: E731
    single = _run(tmp_path, build, rows, name="single.json")
    multi = _run(tmp_path, build, rows, ["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
                 name="multi.json")
    assert single == multi
    assert sum(not r["dedup_keep"] for r in single) == 6 + 3 + 2
    assert np.all([set(FIELDS) <= set(r) for r in single])


def test_near_dedup_rejects_impossible_parameters_with_one_line_errors():
    from corpus.errors import ConfigError

    for kw in (dict(bands=20, rows=8), dict(threshold=1.5), dict(ngram=0), dict(num_perm=0)):
        with pytest.raises(ConfigError):
            NearDedup(**kw)
    assert (NearDedup().bands, NearDedup().rows) == (16, 8)


def test_packed_and_per_bucket_band_grouping_agree(tmp_path):
    rows = _corpus(seed=3, groups=10)
    per_bucket = _run(tmp_path, lambda pc: pc | NearDedup(bucket_partitions=0), rows, name="a.json")
    packed = _run(tmp_path, lambda pc: pc | NearDedup(bucket_partitions=3), rows, name="b.json")
    assert per_bucket == packed and sum(not r["dedup_keep"] for r in packed) == 5 + 2 + 2


def test_verified_edges_with_colliding_key_hashes_compare_real_keys(tmp_path):
    """Band entries carry key hashes; two keys under one hash (forced here) still get their own
    verification against each partner, and edges name the real keys."""
    from pipelines.dedup import VerifiedEdges

    rng = random.Random(9)
    base = [f"w{rng.randrange(10**6)}" for _ in range(200)]
    sets = {k: np.unique(shingle_hashes(w)).tobytes() for k, w in
            (("a", base), ("b", _mutate(rng, base, 2)), ("c", _mutate(rng, base, 1)), ("far", _mutate(rng, base, 60)))}
    path = tmp_path / "edges.json"
    with beam.Pipeline(options=pipeline_options([])) as p:
        data = p | "Data" >> beam.Create([(7, ("a", sets["a"])), (7, ("b", sets["b"])), (9, ("c", sets["c"])),
                                          (11, ("far", sets["far"]))])
        bands = p | "Bands" >> beam.Create([(100, (7, 1)), (100, (9, 2)), (100, (11, 3))])
        ((data, bands) | VerifiedEdges(0.8, verify="exact")
         | beam.combiners.ToList() | beam.Map(lambda e: path.write_text(json.dumps(sorted(e)))))
    assert [tuple(e) for e in json.loads(path.read_text())] == [("a", "c"), ("b", "c")]


def test_near_dedup_batched_path_equals_reference_on_bad_input(tmp_path):
    """NearDedup's batched signatures (one batch holding every case) against the per-document
    reference: empty, shorter than the n-gram, a 1 MB single token, mixed scripts, decoded junk."""
    cases = ["", " \n ", "one", "two words", "x" * 1_000_000, "日本語のテキスト。Mixed English text, 中文的句子。한국어",
             "caf\u00e9 \ufffd\ufffd broken bytes (invalid UTF-8 after decoding) and more words"]
    rows = [{"id": f"bad{i:02d}", "text": t} for i, t in enumerate(cases)]
    rows += [{"id": "bad05-copy", "text": cases[5] + " !"}, {"id": "big-copy", "text": cases[4]},
             {"id": "short-copy", "text": "Two  words"}]
    out = _by_id(_run(tmp_path, lambda pc: pc | "Near" >> NearDedup(), rows))
    ref, _ = near_dedup_in_memory((r["id"], r["text"]) for r in rows)
    for k, m in ref.items():
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == \
            (m.cluster, m.cluster_size, m.keep), k
    assert out["big-copy"]["dedup_cluster"] == "bad04" and out["short-copy"]["dedup_cluster"] == "bad03"
    assert out["bad05-copy"]["dedup_cluster"] == "bad05"
