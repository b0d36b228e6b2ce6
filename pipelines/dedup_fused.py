"""Exact + near dedup fused into one Beam transform that never shuffles rows: `FusedDedup`.

Same marks as ExactDedup followed by NearDedup (pipelines/dedup.py, the "keyed" path; tests
compare them) with a fraction of the transforms and of the per-element work:
1. Prepare (one DoFn over batches of rows): each text is normalised once; its exact hash is
   emitted as (hash, key) and its MinHash signature's LSH band entries as packed byte strings
   (bucket id % P groups, as NearDedup packs them). Nothing else leaves this step: no row copy,
   no shingle sets.
2. Candidates: the band groups propose candidate pairs of key hashes (the same rule as
   NearDedup); one CombineGlobally turns them into a partner index {key hash: partners}.
3. Verify: one pass over the rows with the partner index as a side input re-derives the shingle
   sets of candidate documents only (a few percent of a corpus), brings both sides of each pair
   together with one GroupByKey, and keeps pairs whose exact shingle-set Jaccard (or MinHash
   estimate, verify="signature") is >= threshold.
4. Clusters: exact groups (GroupByKey on the hash) and verified pairs go into one union-find in
   a CombineGlobally (root = smallest key, filters/dedup_cluster.py's survivor rule), whose
   result {key: (root, size, exact duplicate?)} covers only documents in clusters of two or more.
5. Mark: one Map over the rows with that table as a side input writes the four dedup fields.

Memory bound (every worker holds the two side inputs; a local runner also holds the rows
between Prepare and Mark, as any pipeline that decides after seeing the whole corpus must):
about 150 bytes per candidate pair + 200 bytes per document in a cluster of two or more, plus
20 bytes per band entry (bands per document) for the LSH step. A corpus whose duplicates alone
do not fit one worker's memory takes the keyed path (`mode: keyed` in the text config: every
step keyed work, connected components as iterated large/small-star rounds).
"""
from __future__ import annotations

import apache_beam as beam
import numpy as np
import xxhash

from corpus.errors import ConfigError
from filters.dedup_cluster import DEFAULT_VERIFY, EXACT_DUPLICATE, NEAR_DUPLICATE, similarity_for
from filters.dedup_text import (distinct_per_document, hash_normalized, normalize_text, shingle_hashes_spaced,
                                spaced_words)
from filters.minhash_signature import MinHasher, band_hashes
from pipelines.dedup import (_candidate_pairs, _key_of, _unpack_partition, _with_marks, band_partitions, key_hash,
                             near_params)

EXACT, BANDS = "exact", "bands"


class _Prepare(beam.DoFn):
    """Batches of rows -> (exact hash, key) on EXACT and packed band entries on BANDS (see
    pipelines/dedup.py _Signatures: three byte strings of uint64 bucket ids, uint32 signature
    fingerprints and uint64 key hashes per bucket partition). One normalisation per text."""

    def __init__(self, text_field, key_field, exact, near, num_perm, seed, ngram, bands, rows, partitions):
        self.text_field, self.key_field, self.exact, self.near = text_field, key_field, exact, near
        self.num_perm, self.seed, self.ngram = num_perm, seed, ngram
        self.bands, self.rows, self.partitions = bands, rows, max(1, partitions)

    def setup(self):
        self.hasher = MinHasher(self.num_perm, self.seed) if self.near else None

    def process(self, batch):
        keys, spaced = [], []
        for row in batch:
            text = row.get(self.text_field)
            norm = normalize_text(text if isinstance(text, str) else None)
            if not norm:
                continue
            key = _key_of(row, self.key_field)
            if self.exact:
                yield beam.pvalue.TaggedOutput(EXACT, (hash_normalized(norm), key))
            if self.near:
                keys.append(key)
                spaced.append(spaced_words(norm))
        if not keys:
            return
        flat, counts = shingle_hashes_spaced(spaced, self.ngram)
        sets, set_counts = distinct_per_document(flat, counts)
        del flat, spaced
        sigs = self.hasher.signatures(np.split(sets, np.cumsum(set_counts)[:-1]))
        buckets = band_hashes(sigs, self.bands, self.rows)
        fps = np.array([xxhash.xxh32_intdigest(s.tobytes()) for s in sigs], dtype=np.uint32)
        khs = np.array([key_hash(k) for k in keys], dtype=np.uint64)
        for item in band_partitions(buckets, fps, khs, self.bands, self.partitions):
            yield beam.pvalue.TaggedOutput(BANDS, item)


class _PartnerIndex(beam.CombineFn):
    """Candidate pairs (a, b) of key hashes -> {key hash: sorted partner key hashes}."""

    def create_accumulator(self):
        return set()

    def add_input(self, acc, pair):
        acc.add(pair)
        return acc

    def merge_accumulators(self, accs):
        accs = iter(accs)
        out = next(accs)
        for a in accs:
            out |= a
        return out

    def extract_output(self, acc):
        index: dict[int, list[int]] = {}
        for a, b in acc:
            index.setdefault(a, []).append(b)
            index.setdefault(b, []).append(a)
        return {k: sorted(v) for k, v in index.items()}


class _CandidateData(beam.DoFn):
    """Batches of rows -> ((a, b), (key hash, key, verification data)) once per candidate pair a
    document is in; rows of no candidate pair emit nothing. Data: the sorted distinct shingle
    hashes (verify="exact") or the signature (verify="signature"), as uint32 bytes. The batch's
    candidate documents are shingled together (one numpy pass, filters/dedup_text.py), not one by
    one: with many duplicates, candidates are a large share of a corpus."""

    def __init__(self, text_field, key_field, ngram, verify, num_perm, seed):
        self.text_field, self.key_field, self.ngram, self.verify = text_field, key_field, ngram, verify
        self.num_perm, self.seed = num_perm, seed

    def setup(self):
        self.hasher = MinHasher(self.num_perm, self.seed) if self.verify == "signature" else None

    def process(self, batch, index):
        if not index:
            return
        found, spaced = [], []
        for row in batch:
            key = _key_of(row, self.key_field)
            kh = key_hash(key)
            partners = index.get(kh)
            if not partners:
                continue
            text = row.get(self.text_field)
            norm = normalize_text(text if isinstance(text, str) else None)
            if norm:
                found.append((kh, key, partners))
                spaced.append(spaced_words(norm))
        if not found:
            return
        sets, set_counts = distinct_per_document(*shingle_hashes_spaced(spaced, self.ngram))
        data = np.split(sets, np.cumsum(set_counts)[:-1])
        if self.hasher is not None:
            data = list(self.hasher.signatures(data))
        for (kh, key, partners), d in zip(found, data):
            blob = d.tobytes()
            for p in partners:
                yield (min(kh, p), max(kh, p)), (kh, key, blob)


def _verify_pair(item, threshold, similarity):
    """((a, b), members) -> edges (smaller key, larger key) between a-side and b-side documents
    whose similarity >= threshold. One key twice (duplicate ids, different text): the smallest
    data bytes, as the keyed path picks."""
    (a, b), members = item
    sides: dict[int, dict[str, bytes]] = {a: {}, b: {}}
    for kh, key, data in members:
        side = sides[kh]
        if key not in side or data < side[key]:
            side[key] = data
    other = [(kb, np.frombuffer(db, dtype=np.uint32)) for kb, db in sorted(sides[b].items())]
    for ka, da in sorted(sides[a].items()):
        va = np.frombuffer(da, dtype=np.uint32)
        for kb, vb in other:
            if ka != kb and similarity(va, vb) >= threshold:
                yield (min(ka, kb), max(ka, kb), False)


def _exact_edges(item):
    """(hash, keys) -> (root, key, True) for every other distinct key of an exact group."""
    _, keys = item
    keys = sorted(set(keys))
    for k in keys[1:]:
        yield keys[0], k, True


class _Clusters(beam.CombineFn):
    """Edges (a, b, exact?) -> {key: (root, cluster size, exact duplicate?)} for every key on an
    edge: one union-find (root = smallest key). "Exact duplicate" = an exact edge names the key
    as its larger end, i.e. a smaller key has the same normalised text."""

    def create_accumulator(self):
        return ({}, set())

    @staticmethod
    def _find(parent, x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def _union(self, parent, a, b):
        ra, rb = self._find(parent, a), self._find(parent, b)
        if ra != rb:
            if rb < ra:
                ra, rb = rb, ra
            parent[rb] = ra

    def add_input(self, acc, edge):
        parent, exact_dups = acc
        a, b, exact = edge
        self._union(parent, a, b)
        if exact:
            exact_dups.add(b)
        return acc

    def merge_accumulators(self, accs):
        accs = iter(accs)
        parent, exact_dups = next(accs)
        for other_parent, other_dups in accs:
            for x, px in other_parent.items():
                self._union(parent, x, px)
            exact_dups |= other_dups
        return parent, exact_dups

    def extract_output(self, acc):
        parent, exact_dups = acc
        roots = {x: self._find(parent, x) for x in parent}
        sizes: dict[str, int] = {}
        for r in roots.values():
            sizes[r] = sizes.get(r, 0) + 1
        return {x: (r, sizes[r], x in exact_dups) for x, r in roots.items()}


def _mark(row, labels, key_field):
    key = _key_of(row, key_field)
    hit = labels.get(key)
    if hit is None:
        return _with_marks(row, key, 1, True, None)
    root, size, exact_dup = hit
    keep = key == root
    return _with_marks(row, root, size, keep, None if keep else (EXACT_DUPLICATE if exact_dup else NEAR_DUPLICATE))


class FusedDedup(beam.PTransform):
    """Exact and/or near dedup of PCollection[dict]; every row comes out with dedup_cluster,
    dedup_cluster_size, dedup_keep and dedup_reason, as ExactDedup | NearDedup write them."""

    def __init__(self, text_field: str = "text", key_field: str = "id", exact: bool = True, near: bool = True,
                 num_perm: int = 128, bands: int | None = None, rows: int | None = None, threshold: float = 0.8,
                 ngram: int = 5, seed: int = 1, verify: str = DEFAULT_VERIFY, bucket_partitions: int = 256,
                 batch_size: int = 1024, max_rounds: int | None = None):
        super().__init__()
        self.text_field, self.key_field, self.exact, self.near = text_field, key_field, bool(exact), bool(near)
        self.num_perm, self.threshold, self.ngram, self.seed = num_perm, threshold, ngram, seed
        try:
            if int(batch_size) < 1:
                raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        except (TypeError, ValueError) as e:
            raise ConfigError(f"dedup: {e}") from None
        self.bands, self.rows = near_params(num_perm, bands, rows, threshold, ngram, verify, "dedup")
        self.verify, self.batch_size = verify, int(batch_size)
        self.bucket_partitions = max(1, int(bucket_partitions or 1))
        # max_rounds belongs to the keyed path's connected components; accepted so one config
        # serves both modes

    def expand(self, rows):
        tf, kf = self.text_field, self.key_field
        batches = rows | "Batch" >> beam.BatchElements(min_batch_size=min(32, self.batch_size),
                                                       max_batch_size=self.batch_size)
        prep = (batches
                | "Prepare" >> beam.ParDo(_Prepare(tf, kf, self.exact, self.near, self.num_perm, self.seed, self.ngram,
                                                   self.bands, self.rows, self.bucket_partitions))
                .with_outputs(EXACT, BANDS))
        edges = []
        if self.exact:
            edges.append(prep[EXACT] | "ExactGroups" >> beam.GroupByKey() | "ExactEdges" >> beam.FlatMap(_exact_edges))
        if self.near:
            index = (prep[BANDS]
                     | "Buckets" >> beam.GroupByKey()
                     | "Unpack" >> beam.FlatMap(_unpack_partition)
                     | "Candidates" >> beam.FlatMap(_candidate_pairs)
                     | "PartnerIndex" >> beam.CombineGlobally(_PartnerIndex()).without_defaults())
            edges.append(batches
                         | "CandidateData" >> beam.ParDo(_CandidateData(tf, kf, self.ngram, self.verify, self.num_perm,
                                                                          self.seed),
                                              beam.pvalue.AsSingleton(index, default_value={}))
                         | "Pairs" >> beam.GroupByKey()
                         | "Verify" >> beam.FlatMap(_verify_pair, threshold=self.threshold,
                                                    similarity=similarity_for(self.verify)))
        if not edges:
            return rows | "NoDedup" >> beam.Map(lambda r: _with_marks(r, _key_of(r, kf), 1, True, None))
        all_edges = edges[0] if len(edges) == 1 else tuple(edges) | "AllEdges" >> beam.Flatten()
        # without_defaults: no default-value branch (a Create and a side-input Map, two more fused
        # stages per combine); an empty result is the side input's default instead
        labels = all_edges | "Clusters" >> beam.CombineGlobally(_Clusters()).without_defaults()
        return rows | "Mark" >> beam.Map(_mark, labels=beam.pvalue.AsSingleton(labels, default_value={}),
                                         key_field=kf)
