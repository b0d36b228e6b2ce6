"""Beam transforms for exact and MinHash near-duplicate dedup that never hold the corpus in one worker.

This is the keyed path (`dedup.mode: keyed`): nothing global, for corpora whose duplicates do not
fit one worker's memory. The text pipeline's default, FusedDedup (pipelines/dedup_fused.py), gives
the same marks with far fewer transforms and reuses the helpers here.

Both transforms take PCollection[dict] and return every row (none removed) with four fields added:
`dedup_cluster` (str: the cluster's survivor key), `dedup_cluster_size` (int), `dedup_keep` (bool)
and `dedup_reason` (None, "exact_duplicate" or "near_duplicate"). Survivor = smallest key in the
cluster (filters/dedup_cluster.py), so the result is the same for any runner or worker count.
Rows whose text normalises to nothing pass through as clusters of one.

NearDedup, step by step (each step is keyed work, so it spreads over workers):
1. signatures: ParDo over batches of rows -> (key hash, (key, verification data)) (step 3);
2. LSH: every signature emits one (band bucket id, (key hash, signature fingerprint)) per band,
   packed per batch into `bucket_partitions` groups of buckets (bucket id % P; 0 = one Beam key
   per bucket); GroupByKey, then each bucket with two or more entries proposes candidate pairs
   (all pairs in small buckets; in large buckets identical signatures are linked to their
   smallest key, the rest to the bucket's smallest key and to their key-order predecessor);
3. verification: two joins bring both documents' verification data to each candidate pair; a
   pair is an edge when its Jaccard >= threshold: by default (verify="exact") the exact Jaccard
   of the two shingle sets (sorted distinct hashes, 4 bytes per shingle: smaller than a 512-byte
   signature for short documents), else (verify="signature") the MinHash estimate, matching
   minima / num_perm, whose ~0.035 standard error at 0.8 sends pairs near the threshold either way;
4. connected components: alternating large-star / small-star rounds (Kiveris et al., 2014) over
   the edge PCollection, unrolled `max_rounds` times, then a convergence check; components that
   are not yet stars (never seen in practice within the default rounds) are finished by a
   union-find over the remaining edges only, in one worker;
5. labels and cluster sizes are joined back to the rows by key.

Memory on a local runner: FnApiRunner keeps every PCollection between fused stages in memory
(a stage's whole output, then the GroupByKey tables with values decoded into Python objects, then
their re-encoded copy), so what crosses a shuffle is kept compact: rows as one pickled bytes value
each, band entries packed per batch with 63-bit key hashes instead of keys (20 bytes an entry),
shingle sets as bytes. On 1M short documents this took peak RSS from 6.5 GB to 3.0 GB
(bench/dedup.py --only-memory); the largest holders are the first stage's outputs (rows, shingle
sets, band entries: ~2.4 GB resident) and the final rows join.

Composition: run ExactDedup first, then NearDedup: exact duplicates always fall in the same near
cluster (same normalised text -> same signature), keep their "exact_duplicate" reason, and get the
near cluster's id and size.
"""
from __future__ import annotations

import logging
import pickle
from typing import Iterable

import apache_beam as beam
import numpy as np
import xxhash

from corpus.errors import ConfigError
from filters.dedup_cluster import (DEFAULT_VERIFY, EXACT_DUPLICATE, NEAR_DUPLICATE, UnionFind,
                                   similarity_for)
from filters.dedup_lsh import (band_partitions, candidate_pairs, key_hash, key_of, near_params, partition_pairs,
                               with_marks)
from filters.dedup_text import distinct_per_document, exact_hash, shingle_hashes_batch, words_of
from filters.minhash_signature import MinHasher, band_hashes, signature_jaccard

log = logging.getLogger(__name__)



def _pack_row(row: dict) -> bytes:
    """A row as one pickled bytes value for the joins that carry whole rows: a local runner that
    groups in memory (FnApiRunner) then holds one bytes object per row instead of a decoded dict
    of Python objects (several times larger); on a distributed runner it is the same bytes."""
    return pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack_row(blob: bytes) -> dict:
    return pickle.loads(blob)


def _singleton(row: dict, key_field: str) -> dict:
    return with_marks(row, key_of(row, key_field), 1, True, None)


# ----------------------------------------------------------------------------------- exact dedup

class _MinCount(beam.CombineFn):
    """(smallest key, count) of a group: combiner-lifted, so huge groups never sit in one list."""

    def create_accumulator(self):
        return (None, 0)

    def add_input(self, acc, key):
        m, n = acc
        return (key if m is None or key < m else m, n + 1)

    def merge_accumulators(self, accs):
        m, n = None, 0
        for am, an in accs:
            n += an
            if am is not None and (m is None or am < m):
                m = am
        return (m, n)

    def extract_output(self, acc):
        return acc


class ExactDedup(beam.PTransform):
    """Mark exact duplicates (same hash of normalised text); all rows come out, survivors keep=True."""

    def __init__(self, text_field: str = "text", key_field: str = "id"):
        super().__init__()
        self.text_field, self.key_field = text_field, key_field

    def expand(self, rows):
        tf, kf = self.text_field, self.key_field
        hashed = rows | "Hash" >> beam.Map(lambda r: (exact_hash(r.get(tf)), r))
        empty = (hashed | "Empty" >> beam.Filter(lambda hr: not hr[0])
                 | "PassEmpty" >> beam.Map(lambda hr: _singleton(hr[1], kf)))
        full = hashed | "NonEmpty" >> beam.Filter(lambda hr: bool(hr[0]))
        stats = (full | "HashKey" >> beam.Map(lambda hr: (hr[0], key_of(hr[1], kf)))
                 | "MinCount" >> beam.CombinePerKey(_MinCount()))

        def _mark(item):
            _, grouped = item
            (root, size), = grouped["stats"]
            for blob in grouped["rows"]:
                row = _unpack_row(blob)
                key = key_of(row, kf)
                yield with_marks(row, root, size, key == root, None if key == root else EXACT_DUPLICATE)

        packed = full | "Pack" >> beam.Map(lambda hr: (hr[0], _pack_row(hr[1])))
        marked = ({"rows": packed, "stats": stats} | "Join" >> beam.CoGroupByKey()
                  | "Mark" >> beam.FlatMap(_mark))
        return (empty, marked) | "Merge" >> beam.Flatten()


# ------------------------------------------------------------------------------------ near dedup

class _Signatures(beam.DoFn):
    """Batches of rows -> (key hash, (key, verification data)) for rows with at least one word,
    plus their LSH band entries on the "bands" output (bucket ids computed for the whole batch at
    once). Verification data: the sorted distinct shingle hashes (verify="exact") or the
    signature, as uint32 bytes.

    bucket_partitions = 0: one element (bucket id, (key hash, fingerprint)) per band and document,
    so each bucket is its own Beam key. bucket_partitions = P > 0: the batch's entries are packed
    into one element per partition (bucket id % P) of three byte strings (uint64 bucket ids,
    uint32 signature fingerprints, uint64 key hashes; 20 bytes an entry): the same grouping with
    ~bands x fewer, compact elements, which is what keeps a local runner that holds shuffles in
    memory (FnApiRunner) small."""

    BANDS = "bands"

    def __init__(self, text_field, key_field, num_perm, seed, ngram, bands, rows, bucket_partitions,
                 verify=DEFAULT_VERIFY):
        self.text_field, self.key_field, self.verify = text_field, key_field, verify
        self.num_perm, self.seed, self.ngram = num_perm, seed, ngram
        self.bands, self.rows, self.partitions = bands, rows, bucket_partitions

    def setup(self):
        self.hasher = MinHasher(self.num_perm, self.seed)

    def process(self, batch):
        # one normalisation and one word split per document, then every shingle of the batch
        # hashed, deduplicated per document and min-hashed in bulk (filters/dedup_text.py)
        keys, word_lists = [], []
        for row in batch:
            text = row.get(self.text_field)
            words = words_of(text if isinstance(text, str) else None)
            if words:
                keys.append(key_of(row, self.key_field))
                word_lists.append(words)
        if not keys:
            return
        flat, counts = shingle_hashes_batch(word_lists, self.ngram)
        sets, set_counts = distinct_per_document(flat, counts)
        del flat
        cuts = np.cumsum(set_counts)[:-1]
        set_list = np.split(sets, cuts)
        sigs = self.hasher.signatures(set_list)  # minima over the distinct shingles: same signature
        buckets = band_hashes(sigs, self.bands, self.rows)
        fps = np.array([xxhash.xxh32_intdigest(s.tobytes()) for s in sigs], dtype=np.uint32)
        khs = np.array([key_hash(k) for k in keys], dtype=np.uint64)
        if self.verify == "exact":  # what verification compares: the distinct shingle hashes ...
            data = [h.tobytes() for h in set_list]
        else:  # ... or the signature
            data = [sig.tobytes() for sig in sigs]
        for key, kh, d in zip(keys, khs.tolist(), data):
            yield kh, (key, d)
        if not self.partitions:
            for kh, fp, bucket_ids in zip(khs.tolist(), fps.tolist(), buckets):
                for b in bucket_ids.tolist():
                    yield beam.pvalue.TaggedOutput(self.BANDS, (b, (kh, fp)))
            return
        for item in band_partitions(buckets, fps, khs, self.bands, self.partitions):
            yield beam.pvalue.TaggedOutput(self.BANDS, item)


def _by_key(values: Iterable[tuple[str, bytes]]) -> dict[str, bytes]:
    """(key, data) values under one key hash -> key -> data; one key twice (duplicate keys with
    different text): the smallest data, a deterministic pick."""
    out: dict[str, bytes] = {}
    for key, data in values:
        if key not in out or data < out[key]:
            out[key] = data
    return out


def _half_join(item):
    """key hash hb with its documents' data and the key hashes it pairs with -> (ha, (key, data))."""
    _, grouped = item
    docs = _by_key(grouped["sig"])
    if not docs:
        return
    partners = set(grouped["pair"])
    for key, data in sorted(docs.items()):
        for a in partners:
            yield a, (key, data)


def _verify(item, threshold, similarity=signature_jaccard):
    """key hash ha with its documents' data and its partners' (key, data) -> edges (a, b), a < b,
    between real keys."""
    _, grouped = item
    docs = _by_key(grouped["sig"])
    for key_a, data_a in sorted(docs.items()):
        va = np.frombuffer(data_a, dtype=np.uint32)
        for key_b, data_b in grouped["half"]:
            if key_b != key_a and similarity(va, np.frombuffer(data_b, dtype=np.uint32)) >= threshold:
                yield min(key_a, key_b), max(key_a, key_b)


class VerifiedEdges(beam.PTransform):
    """(data: PCollection[(key hash, (key, data bytes))], band entries: PCollection[(bucket,
    (key hash, fp))] or, when `packed`, PCollection[(partition, packed entries)], both as
    _Signatures writes them) -> PCollection[(a, b)] edges between keys, a < b, Jaccard >= threshold.

    Data: the signature (verify="signature": its estimated Jaccard is compared) or the sorted
    distinct shingle hashes (verify="exact": the exact shingle-set Jaccard), as uint32 bytes."""

    def __init__(self, threshold: float, packed: bool = False, verify: str = DEFAULT_VERIFY):
        super().__init__()
        self.threshold, self.packed = threshold, packed
        self.similarity = similarity_for(verify)

    def expand(self, pcolls):
        sigs, band_entries = pcolls
        t = self.threshold
        buckets = band_entries | "Buckets" >> beam.GroupByKey()
        pairs = (buckets
                 | "Candidates" >> beam.FlatMap(partition_pairs if self.packed else candidate_pairs)
                 | "Distinct" >> beam.Distinct())
        half = ({"sig": sigs, "pair": pairs | "ByLarger" >> beam.Map(lambda p: (p[1], p[0]))}
                | "JoinLarger" >> beam.CoGroupByKey()
                | "Half" >> beam.FlatMap(_half_join))
        return ({"sig": sigs, "half": half}
                | "JoinSmaller" >> beam.CoGroupByKey()
                | "Verify" >> beam.FlatMap(_verify, threshold=t, similarity=self.similarity))


# --------------------------------------------------------------------------- connected components

def _large_star(item):
    u, nbrs = item
    nbrs = set(nbrs)
    m = min(min(nbrs), u)
    for v in nbrs:
        if v > u:
            yield m, v


def _small_star(item):
    u, smaller = item  # all neighbours of u that are smaller than u
    smaller = set(smaller)
    m = min(smaller)
    yield m, u
    for v in smaller:
        if v != m:
            yield m, v


def _star_violations(item):
    """1 if node u is not a leaf-of-min or a centre of a star, else 0."""
    u, nbrs = item
    smaller = {v for v in nbrs if v < u}
    larger = any(v > u for v in nbrs)
    return 1 if (smaller and larger) or len(smaller) > 1 else 0


def _union_find_labels(item):
    _, edges = item
    uf = UnionFind()
    for a, b in edges:
        uf.union(a, b)
    for node in list(uf.parent):
        yield node, uf.find(node)


class ConnectedComponents(beam.PTransform):
    """PCollection[(a, b)] edges -> PCollection[(node, root)] for every node on an edge (root itself
    included); root = the smallest node of the component."""

    def __init__(self, max_rounds: int = 8):
        super().__init__()
        self.max_rounds = max_rounds

    def expand(self, edges):
        cur = edges | "Orient" >> beam.Map(lambda e: (min(e), max(e)))
        for i in range(self.max_rounds):
            cur = (cur
                   | f"LargeStarBoth{i}" >> beam.FlatMap(lambda e: [(e[0], e[1]), (e[1], e[0])])
                   | f"LargeStarGroup{i}" >> beam.GroupByKey()
                   | f"LargeStar{i}" >> beam.FlatMap(_large_star)
                   | f"SmallStarUp{i}" >> beam.Map(lambda e: (e[1], e[0]))
                   | f"SmallStarGroup{i}" >> beam.GroupByKey()
                   | f"SmallStar{i}" >> beam.FlatMap(_small_star))
        cur = cur | "DistinctEdges" >> beam.Distinct()
        bad = (cur
               | "CheckBoth" >> beam.FlatMap(lambda e: [(e[0], e[1]), (e[1], e[0])])
               | "CheckGroup" >> beam.GroupByKey()
               | "Violations" >> beam.Map(_star_violations)
               | "CountViolations" >> beam.CombineGlobally(sum))
        bad_si = beam.pvalue.AsSingleton(bad)

        def _star_labels(e, n_bad):
            if n_bad == 0:
                yield e[1], e[0]
                yield e[0], e[0]

        def _residual(e, n_bad):
            if n_bad:
                yield 0, e

        stars = cur | "StarLabels" >> beam.FlatMap(_star_labels, n_bad=bad_si)
        fallback = (cur | "Residual" >> beam.FlatMap(_residual, n_bad=bad_si)
                    | "ResidualGroup" >> beam.GroupByKey()
                    | "ResidualUnionFind" >> beam.FlatMap(_union_find_labels))
        return ((stars, fallback) | "Labels" >> beam.Flatten()
                | "DistinctLabels" >> beam.Distinct())


# ----------------------------------------------------------------------------------- NearDedup

class NearDedup(beam.PTransform):
    """Mark near duplicates (MinHash LSH over word n-gram shingles, verified, clusters closed
    transitively); all rows come out, one survivor per cluster (smallest key) keeps dedup_keep=True."""

    def __init__(self, text_field: str = "text", key_field: str = "id", num_perm: int = 128,
                 bands: int | None = None, rows: int | None = None, threshold: float = 0.8, ngram: int = 5,
                 seed: int = 1, max_rounds: int = 8, bucket_partitions: int = 256, verify: str = DEFAULT_VERIFY):
        super().__init__()
        self.text_field, self.key_field = text_field, key_field
        self.num_perm, self.threshold, self.ngram, self.seed = num_perm, threshold, ngram, seed
        try:
            if int(max_rounds) < 0:
                raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
        except (TypeError, ValueError) as e:
            raise ConfigError(f"near dedup: {e}") from None
        self.bands, self.rows = near_params(num_perm, bands, rows, threshold, ngram, verify, "near dedup")
        self.max_rounds, self.verify = int(max_rounds), verify
        self.bucket_partitions = max(0, int(bucket_partitions or 0))

    def expand(self, rows):
        kf = self.key_field
        sig_out = (rows
                   | "Batch" >> beam.BatchElements(min_batch_size=32, max_batch_size=1024)
                   | "Signatures" >> beam.ParDo(_Signatures(self.text_field, kf, self.num_perm, self.seed, self.ngram,
                                                            self.bands, self.rows, self.bucket_partitions,
                                                            self.verify))
                   .with_outputs(_Signatures.BANDS, main="sigs"))
        edges = ((sig_out.sigs, sig_out[_Signatures.BANDS])
                 | "Edges" >> VerifiedEdges(self.threshold, packed=self.bucket_partitions > 0, verify=self.verify))
        labels = edges | "Components" >> ConnectedComponents(self.max_rounds)
        sizes = (labels | "Roots" >> beam.Map(lambda nr: (nr[1], 1))
                 | "Sizes" >> beam.CombinePerKey(sum))

        def _node_info(item):
            root, grouped = item
            (size,) = grouped["size"]
            for node in grouped["node"]:
                yield node, (root, size)

        info = ({"node": labels | "ByRoot" >> beam.Map(lambda nr: (nr[1], nr[0])), "size": sizes}
                | "JoinSizes" >> beam.CoGroupByKey()
                | "NodeInfo" >> beam.FlatMap(_node_info))

        def _mark(item):
            key, grouped = item
            infos = list(grouped["info"])
            for blob in grouped["row"]:
                row = _unpack_row(blob)
                if infos:
                    root, size = infos[0]
                    yield with_marks(row, root, size, key == root, None if key == root else NEAR_DUPLICATE)
                else:
                    yield with_marks(row, key, 1, True, None)

        keyed = rows | "KeyRows" >> beam.Map(lambda r: (key_of(r, kf), _pack_row(r)))
        return ({"row": keyed, "info": info} | "JoinRows" >> beam.CoGroupByKey()
                | "Mark" >> beam.FlatMap(_mark))
