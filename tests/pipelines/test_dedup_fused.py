"""FusedDedup (pipelines/dedup_fused.py) against the keyed path (ExactDedup | NearDedup), the
one-process run of the same steps (filters/dedup_lsh.py fused_dedup_rows, the local text engine's
dedup) and the in-memory reference: same marks on generated near-duplicates, bad input, each mode."""
import pickle

import pytest

from filters.dedup_cluster import near_dedup_in_memory
from filters.dedup_lsh import fused_dedup_rows, fused_params
from pipelines.dedup import ExactDedup, NearDedup
from pipelines.dedup_fused import FusedDedup
from tests.pipelines.test_dedup_beam import FIELDS, _by_id, _corpus, _run

BAD_INPUT = ["", " \n ", "one", "two words", "x" * 1_000_000, "日本語のテキスト。Mixed English text, 中文的句子。한국어",
             "caf\u00e9 \ufffd\ufffd broken bytes (invalid UTF-8 after decoding) and more words"]


def _marks(out):
    return {r["id"]: tuple(r[f] for f in FIELDS) for r in out}


def _bad_rows():
    rows = [{"id": f"bad{i:02d}", "text": t} for i, t in enumerate(BAD_INPUT)]
    rows += [{"id": "bad05-copy", "text": BAD_INPUT[5] + " !"}, {"id": "big-copy", "text": BAD_INPUT[4]},
             {"id": "short-copy", "text": "Two  words"}, {"id": "short-exact", "text": "TWO WORDS"}]
    return rows


def _local(rows, **kw):
    """The same steps in this process, without Beam."""
    return fused_dedup_rows(rows, "text", "id", fused_params(**kw))


def _assert_equals_reference(out, rows, **kw):
    ref, _ = near_dedup_in_memory(((r["id"], r.get("text")) for r in rows), **kw)
    for k, m in ref.items():
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == \
            (m.cluster, m.cluster_size, m.keep), k


def test_fused_equals_keyed_path_and_reference(tmp_path):
    rows = _corpus(seed=2, groups=14) + _bad_rows()
    keyed = _run(tmp_path, lambda pc: pc | ExactDedup() | NearDedup(), rows, name="keyed.json")
    fused = _run(tmp_path, lambda pc: pc | FusedDedup(), rows, name="fused.json")
    assert len(fused) == len(rows) and _marks(fused) == _marks(keyed)
    per_pair = _run(tmp_path, lambda pc: pc | FusedDedup(group_cap=1), rows, name="per-pair.json")
    assert _by_id(per_pair) == _by_id(fused)  # verification keyed by pair only, not by component
    stage = tmp_path / "out"  # rows staged as blobs between the steps instead of held by the runner
    staged = _run(tmp_path, lambda pc: pc | FusedDedup(stage_dir=str(stage), batch_size=7), rows, name="staged.json")
    assert _by_id(staged) == _by_id(fused)
    blobs = [pickle.loads(f.read_bytes()) for f in (stage / ".staging").iterdir()]
    assert all(len(b) <= 7 for b in blobs)  # one blob per batch, each row in exactly one
    assert sorted(repr(r) for b in blobs for r in b) == sorted(repr(r) for r in rows)
    local = _local(rows)
    assert len(local) == len(rows) and _marks(local) == _marks(fused)
    assert sum(not r["dedup_keep"] for r in local) >= 10  # the comparison covers real clusters
    out = _by_id(fused)
    assert all(out[r["id"]]["text"] == r["text"] for r in rows if isinstance(r.get("text"), str))  # rows whole
    _assert_equals_reference(out, rows)
    assert out["chain-c"]["dedup_cluster"] == "chain-a" and out["chain-c"]["dedup_reason"] == "near_duplicate"
    assert out["short-exact"]["dedup_reason"] == "exact_duplicate"
    assert out["big-copy"]["dedup_cluster"] == "bad04" and out["bad05-copy"]["dedup_cluster"] == "bad05"
    for k in ("bad00", "bad01", "missing", "bytes", "number"):
        assert _marks(fused)[k] == (k, 1, True, None)


def test_fused_single_modes_and_signature_verification(tmp_path):
    """exact only = ExactDedup; near only and verify="signature" = the in-memory reference."""
    rows = _corpus(seed=4, groups=8) + _bad_rows()
    want = _run(tmp_path, lambda pc: pc | ExactDedup(), rows, name="keyed.json")
    got = _run(tmp_path, lambda pc: pc | FusedDedup(near=False), rows, name="exact.json")
    assert _marks(got) == _marks(want) and sum(not r["dedup_keep"] for r in got) == 2 + 4  # g00, g05; bad03 x2, bad04, bad05
    assert _marks(_local(rows, near=False)) == _marks(want)
    near = _by_id(_run(tmp_path, lambda pc: pc | FusedDedup(exact=False, verify="signature"), rows, name="near.json"))
    assert _marks(_local(rows, exact=False, verify="signature")) == _marks(near.values())
    _assert_equals_reference(near, rows, verify="signature")
    assert not any(r["dedup_reason"] == "exact_duplicate" for r in near.values())
    assert near["short-exact"]["dedup_reason"] == "near_duplicate"


def test_fused_without_candidates_or_words_passes_every_row(tmp_path):
    """No candidate pairs and no edges at all (the combines' results are empty): every row comes
    out as its own cluster, and no rows in gives no rows out."""
    rows = [{"id": "e1", "text": ""}, {"id": "e2", "text": " \n "}, {"id": "w", "text": "one two three four five six"}]
    out = _run(tmp_path, lambda pc: pc | FusedDedup(), rows, name="lonely.json")
    assert _marks(out) == {r["id"]: (r["id"], 1, True, None) for r in rows}
    assert _run(tmp_path, lambda pc: pc | FusedDedup(), [], name="none.json") == []
    assert _marks(_local(rows)) == _marks(out) and _local([]) == []
    assert _marks(_local(rows, exact=False, near=False)) == _marks(out)


@pytest.mark.slow
def test_fused_same_result_with_two_worker_processes_and_small_batches(tmp_path):
    rows = _corpus(seed=1, groups=12)
    single = _run(tmp_path, lambda pc: pc | FusedDedup(), rows, name="single.json")
    multi = _run(tmp_path, lambda pc: pc | FusedDedup(batch_size=3, bucket_partitions=5), rows,
                 ["--direct_num_workers=2", "--direct_running_mode=multi_processing"], name="multi.json")
    assert single == multi
    staged = _run(tmp_path, lambda pc: pc | FusedDedup(batch_size=3, stage_dir=str(tmp_path / "out")), rows,
                  ["--direct_num_workers=2", "--direct_running_mode=multi_processing"], name="staged.json")
    assert _by_id(staged) == _by_id(single)
    assert sum(not r["dedup_keep"] for r in single) == 6 + 3 + 2
    assert _marks(_local(rows, batch_size=3)) == _marks(single)


def test_fused_rejects_impossible_parameters_with_one_line_errors():
    from corpus.errors import ConfigError

    for kw in (dict(bands=20, rows=8), dict(threshold=1.5), dict(ngram=0), dict(num_perm=0), dict(batch_size=0),
               dict(verify="maybe")):
        with pytest.raises(ConfigError, match=r"^dedup: [^\n]+$"):
            FusedDedup(**kw)
    assert (FusedDedup().p.bands, FusedDedup().p.rows) == (16, 8)


def test_verification_groups_send_each_document_once_and_verify_the_same_pairs():
    """Components of the candidate graph of 3 documents up to the cap become one verification key
    each (a document's data emitted once); single pairs and larger components stay keyed by pair;
    both give the same edges."""
    import numpy as np

    from filters.dedup_cluster import similarity_for
    from filters.dedup_lsh import GROUP, by_pair, partner_index, verify_groups, verify_pair

    pairs = [(1, 2), (2, 3), (10, 11), (20, 21), (20, 22), (20, 23), (21, 22)]
    index = partner_index(pairs)
    assert verify_groups(index, cap=3) == {1: 1, 2: 1, 3: 1}  # {10, 11} is one pair; {20..23} over the cap
    sets = {kh: np.arange(kh % 3, 100 + kh % 3, dtype=np.uint32) for kh in index}  # near alike by kh % 3
    members = [(kh, f"k{kh:02d}", sets[kh].tobytes()) for kh in sorted(index)]
    sim = similarity_for("exact")

    def edges(groups):
        grouped: dict = {}
        for key, m in by_pair(members, index, groups):
            grouped.setdefault(key, []).append(m)
        return grouped, sorted(e for item in grouped.items() for e in verify_pair(item, 0.97, sim))

    by_group, with_groups = edges(verify_groups(index, cap=3))
    per_pair, without = edges(None)
    assert with_groups == without and len(without) >= 3
    assert sum(len(v) for k, v in by_group.items() if k[1] == GROUP) == 3  # 1, 2, 3 once each
    assert sum(len(v) for v in per_pair.values()) == 2 * len(pairs)
