"""FusedDedup (pipelines/dedup_fused.py) against the keyed path (ExactDedup | NearDedup) and the
in-memory reference: same marks on generated near-duplicates, bad input, each mode."""
import pytest

from filters.dedup_cluster import near_dedup_in_memory
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


@pytest.mark.parametrize("verify", ["exact", "signature"])
def test_fused_equals_keyed_path_and_reference(tmp_path, verify):
    rows = _corpus(seed=2, groups=14) + _bad_rows()
    keyed = _run(tmp_path, lambda pc: pc | ExactDedup() | NearDedup(verify=verify), rows, name="keyed.json")
    fused = _run(tmp_path, lambda pc: pc | FusedDedup(verify=verify), rows, name="fused.json")
    assert len(fused) == len(rows)
    assert _marks(fused) == _marks(keyed)
    # rows come out whole: every input field kept
    assert sorted(r["id"] for r in fused) == sorted(r["id"] for r in rows)
    assert all(r["text"] == out_row["text"] for r in rows if isinstance(r.get("text"), str)
               for out_row in [_by_id(fused)[r["id"]]])
    ref, _ = near_dedup_in_memory(((r["id"], r.get("text")) for r in rows), verify=verify)
    out = _by_id(fused)
    for k, m in ref.items():
        assert (out[k]["dedup_cluster"], out[k]["dedup_cluster_size"], out[k]["dedup_keep"]) == \
            (m.cluster, m.cluster_size, m.keep), k
    assert out["chain-c"]["dedup_cluster"] == "chain-a" and out["chain-c"]["dedup_reason"] == "near_duplicate"
    assert out["short-exact"]["dedup_reason"] == "exact_duplicate"
    assert out["big-copy"]["dedup_cluster"] == "bad04" and out["bad05-copy"]["dedup_cluster"] == "bad05"
    for k in ("bad00", "bad01", "missing", "bytes", "number"):
        assert _marks(fused)[k] == (k, 1, True, None)


@pytest.mark.parametrize("exact,near", [(True, False), (False, True)])
def test_fused_single_modes_equal_the_keyed_transform(tmp_path, exact, near):
    rows = _corpus(seed=4, groups=8) + _bad_rows()
    keyed = ExactDedup() if exact else NearDedup()
    want = _run(tmp_path, lambda pc: pc | keyed, rows, name="keyed.json")
    got = _run(tmp_path, lambda pc: pc | FusedDedup(exact=exact, near=near), rows, name="fused.json")
    assert _marks(got) == _marks(want)


@pytest.mark.slow
def test_fused_same_result_with_two_worker_processes_and_small_batches(tmp_path):
    rows = _corpus(seed=1, groups=12)
    single = _run(tmp_path, lambda pc: pc | FusedDedup(), rows, name="single.json")
    multi = _run(tmp_path, lambda pc: pc | FusedDedup(batch_size=3, bucket_partitions=5), rows,
                 ["--direct_num_workers=2", "--direct_running_mode=multi_processing"], name="multi.json")
    assert single == multi
    assert sum(not r["dedup_keep"] for r in single) == 6 + 3 + 2
