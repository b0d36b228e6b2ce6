"""Image dedup and the global top-p CLIP cut as keyed Beam work (no gather on one worker) give
exactly what the in-memory functions give, whatever the input order."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from filters.clip_select import ClipSelectConfig, coarse_bin, cut_from_bin, cutoff, locate_rank, merge_counts, order_key
from filters.image_dedup import (band_entries, bucket_edges, duplicate_label, find_duplicates, float_order_hex,
                                 node_key, parse_node)


def _run_beam(build, out_path):
    """Run build(p) on the in-process FnApiRunner; its output collected through a file (DoFns are
    pickled, so they cannot append to a list of the test)."""
    import json

    import apache_beam as beam

    from pipelines.beam_options import pipeline_options

    def dump(items):
        with open(out_path, "w") as f:
            json.dump(items, f)

    with beam.Pipeline(options=pipeline_options([])) as p:
        build(p) | beam.combiners.ToList() | beam.Map(dump)
    with open(out_path) as f:
        return json.load(f)


def test_float_order_keys_sort_like_floats():
    vals = [-math.inf, -1.0, -0.5, -1e-300, 0.0, 1e-300, 0.25, 0.2500001, 1.0, math.inf]
    assert sorted(vals, key=float_order_hex) == vals
    assert sorted(vals, key=order_key) == vals
    assert [coarse_bin(v) for v in vals] == sorted(coarse_bin(v) for v in vals)
    n = node_key("alt", -0.3, "id1", "s" * 64)
    assert parse_node(n) == ("alt", "id1", "s" * 64)
    assert node_key("alt", -0.9, "zz", "a") < node_key("alt", -0.3, "aa", "b") < node_key("alt", -0.3, "ab", "a")
    with pytest.raises(ValueError):
        node_key("a|b", 0.0, "x", "y")


def test_each_near_edge_comes_from_exactly_one_band():
    rng = np.random.default_rng(3)
    d = 4
    base = [int(x) for x in rng.integers(0, 2**63, size=20)]
    members = []
    for i, h in enumerate(base):
        for j in range(3):
            v = h
            for f in rng.choice(64, size=int(rng.integers(0, 6)), replace=False):
                v ^= 1 << int(f)
            members.append((node_key("g", 0.0, f"{i:02d}{j}", f"s{i}{j}"), f"{v:016x}"))
    members.append((node_key("g", 0.0, "dup", "sdup"), members[0][1]))   # an equal pHash
    buckets: dict = {}
    for node, ph in members:
        for key, val in band_entries(node, ph, d):
            buckets.setdefault(key, []).append(val)
    edges = [e for key, vals in buckets.items() for e in bucket_edges(key[1], vals, d)]
    assert len(edges) == len(set(edges)) and all(a < b for a, b in edges)
    assert (min(members[0][0], members[-1][0]), max(members[0][0], members[-1][0])) in set(edges)
    # every pair of distinct pHashes within d bits is linked (between the smallest nodes of equal hashes)
    heads = {}
    for node, ph in members:
        heads[ph] = min(heads.get(ph, node), node)
    hs = sorted(heads)
    want = {tuple(sorted((heads[a], heads[b]))) for i, a in enumerate(hs) for b in hs[i + 1:]
            if bin(int(a, 16) ^ int(b, 16)).count("1") <= d}
    assert want and want <= set(edges)
    assert duplicate_label(members[0][0], members[0][0]) is None


def _dedup_items(seed: int):
    """Clusters of exact copies, near copies (chains too), two groups, some missing pHashes."""
    rng = np.random.default_rng(seed)
    items = []
    for c in range(40):
        h = int(rng.integers(0, 2**63))
        group = "alt" if c % 4 else "caption"
        for j in range(int(rng.integers(1, 5))):
            v = h
            for f in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
                v ^= 1 << int(f)
            if j and rng.random() < 0.3:
                h = v                         # chain: the next copy is near this one, maybe far from the first
            sha = f"sha{c}" if rng.random() < 0.4 else f"sha{c}_{j}"
            score = float(np.round(rng.uniform(-0.2, 0.6), 2))
            pid = f"{c:03d}{j}{int(rng.integers(0, 1000)):03d}"
            items.append((pid, sha, None if rng.random() < 0.05 else f"{v:016x}", group, (-score, pid)))
    return items


@pytest.mark.parametrize("distance", [4, -1])
def test_beam_image_dedup_equals_in_memory(distance, tmp_path):
    import apache_beam as beam

    from pipelines.images_pipeline import ImageDuplicates

    items = _dedup_items(0)
    want = find_duplicates(items, distance)
    assert any(r == "duplicate_image_near" for r, _ in want.values()) or distance < 0
    assert any(r == "duplicate_image_exact" for r, _ in want.values())
    random.Random(1).shuffle(items)
    cands = [(node_key(g, prio[0], pid, sha), sha, ph) for pid, sha, ph, g, prio in items]

    def build(p):
        return p | beam.Create(cands) | ImageDuplicates(distance)

    got = _run_beam(build, tmp_path / "out.json")
    assert len(got) == len({k for k, _ in got})
    assert {k: tuple(v) for k, v in got} == want


def test_top_percent_cut_from_two_passes_equals_cutoff():
    rng = random.Random(0)
    vals = [round(rng.uniform(-0.3, 0.5), 3) for _ in range(2000)] + [0.1] * 50 + [float("nan"), None] * 5
    for cfg in (ClipSelectConfig(None, 30), ClipSelectConfig(0.05, 10), ClipSelectConfig(None, 100),
                ClipSelectConfig(0.45, 0.01), ClipSelectConfig(0.9, 50)):
        want = cutoff([math.nan if v is None else v for v in vals], cfg)
        finite = [v for v in vals if v is not None and not math.isnan(v) and v >= (cfg.threshold or -math.inf)]
        parts = [finite[i::7] for i in range(7)]         # accumulators merged in any grouping
        coarse = merge_counts([{b: n for b, n in _count(coarse_bin(v) for v in part).items()} for part in parts])
        loc = locate_rank(coarse, cfg)
        if loc is None:
            got = cfg.threshold
        else:
            got = cut_from_bin(merge_counts(_count(v for v in part if coarse_bin(v) == loc[0]) for part in parts),
                               loc[1], cfg)
        assert got == want, (cfg, got, want)


def _count(it):
    out: dict = {}
    for x in it:
        out[x] = out.get(x, 0) + 1
    return out


@pytest.mark.parametrize("cfg", [ClipSelectConfig(None, 30), ClipSelectConfig(0.2, None), ClipSelectConfig(0.1, 5),
                                 ClipSelectConfig(0.99, 5)])
def test_beam_clip_cut_equals_cutoff(cfg, tmp_path):
    import apache_beam as beam

    from pipelines.images_pipeline import ClipCut

    rng = random.Random(5)
    vals = [round(rng.uniform(-0.2, 0.6), 2) for _ in range(500)] + [None, float("nan")]
    want = cutoff([math.nan if v is None else v for v in vals], cfg)

    def build(p):
        return p | beam.Create(vals) | ClipCut(cfg)

    assert _run_beam(build, tmp_path / "out.json") == [want]
