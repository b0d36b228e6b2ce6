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
   estimate, verify="signature") is >= threshold. The GroupByKey's keys are connected components
   of the candidate graph of 3 to `group_cap` documents (each document's set crosses once), and
   single pairs elsewhere (each set once per pair).
4. Clusters: exact groups (GroupByKey on the hash) and verified pairs go into one union-find in
   a CombineGlobally (root = smallest key, filters/dedup_cluster.py's survivor rule), whose
   result {key: (root, size, exact duplicate?)} covers only documents in clusters of two or more.
5. Mark: one Map over the rows with that table as a side input writes the four dedup fields.

Staged rows (`stage_dir`; pipelines/staged_rows.py says why and when): steps 3 and 5 read the
rows again after steps 2 and 4 have seen the whole corpus. With a stage directory, Prepare also
writes each batch of rows as one staged file and only the names travel on; CandidateData and
Mark read the rows back from there. The marks and the rows that come out are the same either way.
On disk, the staging area then holds the rows once more until the job ends.

Memory bound (every worker holds the two side inputs; without staging, a local runner also holds
the rows between Prepare and Mark, as any pipeline that decides after seeing the whole corpus must):
about 150 bytes per candidate pair + 200 bytes per document in a cluster of two or more, plus
20 bytes per band entry (bands per document) for the LSH step. A corpus whose duplicates alone
do not fit one worker's memory takes the keyed path (`mode: keyed` in the text config: every
step keyed work, connected components as iterated large/small-star rounds).
"""
from __future__ import annotations

import apache_beam as beam

from filters.dedup_cluster import UnionFind, similarity_for
from filters.dedup_lsh import (VERIFY_GROUP_CAP, add_edge, candidate_data, cluster_labels, exact_edges,
                               fused_params, key_of, mark_row, partner_index, partition_pairs, prepare_batch,
                               verify_groups, verify_pair, with_marks)
from filters.minhash_signature import MinHasher
from pipelines.staged_rows import map_staged, stage_rows, staged_rows

EXACT, BANDS = "exact", "bands"


class _Prepare(beam.DoFn):
    """Batches of rows -> (exact hash, key) on EXACT and packed band entries on BANDS (three byte
    strings of uint64 bucket ids, uint32 signature fingerprints and uint64 key hashes per bucket
    partition; filters/dedup_lsh.py prepare_batch). One normalisation per text."""

    def __init__(self, text_field, key_field, exact, near, num_perm, seed, ngram, bands, rows, partitions,
                 stage_dir=None):
        self.text_field, self.key_field, self.exact, self.near = text_field, key_field, exact, near
        self.num_perm, self.seed, self.ngram = num_perm, seed, ngram
        self.bands, self.rows, self.partitions = bands, rows, max(1, partitions)
        self.stage_dir = stage_dir

    def dataset_paths(self) -> list[str]:  # what a remote runner's workers must see (runners/dask_client.py)
        return [self.stage_dir] if self.stage_dir else []

    def setup(self):
        self.hasher = MinHasher(self.num_perm, self.seed) if self.near else None

    def process(self, batch):
        exact_items, band_items, _ = prepare_batch(batch, self.text_field, self.key_field, self.exact, self.hasher,
                                                   self.ngram, self.bands, self.rows, self.partitions)
        if self.stage_dir:  # main output: the staged batch's name, in place of the rows
            yield stage_rows(self.stage_dir, batch)
        for item in exact_items:
            yield beam.pvalue.TaggedOutput(EXACT, item)
        for item in band_items:
            yield beam.pvalue.TaggedOutput(BANDS, item)


class _PartnerIndex(beam.CombineFn):
    """Candidate pairs (a, b) of key hashes -> ({key hash: sorted partner key hashes}, {key hash:
    verification group}) (filters/dedup_lsh.py partner_index, verify_groups)."""

    def __init__(self, group_cap: int = VERIFY_GROUP_CAP):
        self.group_cap = group_cap

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
        index = partner_index(acc)
        return index, verify_groups(index, self.group_cap)


class _CandidateData(beam.DoFn):
    """Batches of rows (or staged batch names) -> (key, member) for the verification groups: once
    per document of a small candidate component, else once per candidate pair it is in
    (filters/dedup_lsh.py candidate_data); rows of no candidate pair emit nothing."""

    def __init__(self, text_field, key_field, ngram, verify, num_perm, seed, stage_dir=None):
        self.text_field, self.key_field, self.ngram, self.verify = text_field, key_field, ngram, verify
        self.num_perm, self.seed, self.stage_dir = num_perm, seed, stage_dir

    def dataset_paths(self) -> list[str]:
        return [self.stage_dir] if self.stage_dir else []

    def setup(self):
        self.hasher = MinHasher(self.num_perm, self.seed) if self.verify == "signature" else None

    def process(self, batch, index_groups):
        index, groups = index_groups
        if not index:  # no candidate pair anywhere: nothing to read back
            return
        if self.stage_dir:
            batch = staged_rows(self.stage_dir, batch)
        yield from candidate_data(batch, index, self.text_field, self.key_field, self.ngram, self.hasher, groups)


class _Clusters(beam.CombineFn):
    """Edges (a, b, exact?) -> {key: (root, cluster size, exact duplicate?)} for every key on an
    edge: one union-find (root = smallest key)."""

    def create_accumulator(self):
        return (UnionFind(), set())

    def add_input(self, acc, edge):
        add_edge(acc[0], acc[1], edge)
        return acc

    def merge_accumulators(self, accs):
        accs = iter(accs)
        uf, exact_dups = next(accs)
        for other_uf, other_dups in accs:
            for x, px in other_uf.parent.items():
                uf.union(x, px)
            exact_dups |= other_dups
        return uf, exact_dups

    def extract_output(self, acc):
        return cluster_labels(*acc)


class FusedDedup(beam.PTransform):
    """Exact and/or near dedup of PCollection[dict]; every row comes out with dedup_cluster,
    dedup_cluster_size, dedup_keep and dedup_reason, as ExactDedup | NearDedup write them."""

    def __init__(self, text_field: str = "text", key_field: str = "id", stage_dir: str | None = None,
                 group_cap: int = VERIFY_GROUP_CAP, **options):
        """`stage_dir`: a dataset directory (local or s3://) whose staging area holds the rows
        between Prepare and Mark (see the module docstring); None keeps them in the runner.
        `group_cap`: the most documents' key hashes one verification group holds (step 3)."""
        super().__init__()
        self.text_field, self.key_field, self.stage_dir = text_field, key_field, stage_dir
        self.group_cap = max(1, int(group_cap))
        self.p = fused_params(**options)  # filters/dedup_lsh.py: defaults and checks

    def expand(self, rows):
        tf, kf, p, sd = self.text_field, self.key_field, self.p, self.stage_dir
        if not (p.exact or p.near):
            return rows | "NoDedup" >> beam.Map(lambda r: with_marks(r, key_of(r, kf), 1, True, None))
        batches = rows | "Batch" >> beam.BatchElements(min_batch_size=min(32, p.batch_size),
                                                       max_batch_size=p.batch_size)
        prep = (batches
                | "Prepare" >> beam.ParDo(_Prepare(tf, kf, p.exact, p.near, p.num_perm, p.seed, p.ngram, p.bands,
                                                   p.rows, p.bucket_partitions, sd))
                .with_outputs(EXACT, BANDS, main="staged"))
        if sd:
            batches = prep.staged  # names of staged batches from here on
        edges = []
        if p.exact:
            edges.append(prep[EXACT] | "ExactGroups" >> beam.GroupByKey() | "ExactEdges" >> beam.FlatMap(exact_edges))
        if p.near:
            index = (prep[BANDS]
                     | "Buckets" >> beam.GroupByKey()
                     | "Candidates" >> beam.FlatMap(partition_pairs)
                     | "PartnerIndex" >> beam.CombineGlobally(_PartnerIndex(self.group_cap)).without_defaults())
            candidates = _CandidateData(tf, kf, p.ngram, p.verify, p.num_perm, p.seed, sd)
            index_si = beam.pvalue.AsSingleton(index, default_value=({}, {}))
            edges.append(batches
                         | "CandidateData" >> beam.ParDo(candidates, index_si)
                         | "Pairs" >> beam.GroupByKey()
                         | "Verify" >> beam.FlatMap(verify_pair, threshold=p.threshold,
                                                    similarity=similarity_for(p.verify)))
        all_edges = edges[0] if len(edges) == 1 else tuple(edges) | "AllEdges" >> beam.Flatten()
        # without_defaults: no default-value branch (a Create and a side-input Map, two more fused
        # stages per combine); an empty result is the side input's default instead
        clusters = all_edges | "Clusters" >> beam.CombineGlobally(_Clusters()).without_defaults()
        labels = beam.pvalue.AsSingleton(clusters, default_value={})
        if sd:
            return map_staged(batches, "Mark", mark_row, sd, labels=labels, key_field=kf)
        return rows | "Mark" >> beam.Map(mark_row, labels=labels, key_field=kf)
