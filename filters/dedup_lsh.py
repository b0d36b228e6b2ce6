"""The steps of exact + near (MinHash LSH) dedup as plain functions, without Beam.

pipelines/dedup_fused.py runs them as Beam transforms (shuffles between the steps) and
pipelines/text_local.py runs them in one process; both call these functions, so both give the
same marks. pipelines/dedup.py (the keyed path) shares the band packing and candidate rule.

Keys travel as 63-bit hashes (`key_hash`) through the LSH steps; verification compares the real
keys' shingle sets. The survivor rule is filters/dedup_cluster.py's: the smallest key.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import numpy as np
import xxhash

from corpus.errors import ConfigError
from filters import dedup_native
from filters.dedup_cluster import (DEFAULT_VERIFY, EXACT_DUPLICATE, NEAR_DUPLICATE, VERIFY_MODES, UnionFind,
                                   similarity_for)
from filters.dedup_text import (distinct_per_document, hash_normalized, normalize_text, shingle_hashes_spaced,
                                spaced_words)
from filters.minhash_signature import MinHasher, band_hashes, resolve_bands_rows

SMALL_BUCKET = 10  # all pairs are proposed in buckets up to this size
_MASK63 = (1 << 63) - 1


def near_params(num_perm, bands, rows, threshold, ngram, verify, what: str) -> tuple[int, int]:
    """Checked near-dedup parameters -> (bands, rows); a ConfigError naming `what` otherwise."""
    try:
        if not 1 <= int(ngram) <= 16:
            raise ValueError(f"ngram must be in 1..16, got {ngram}")
        if verify not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {', '.join(VERIFY_MODES)}, got {verify!r}")
        return resolve_bands_rows(int(num_perm), bands, rows, float(threshold))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{what}: {e}") from None


@dataclass(frozen=True)
class FusedParams:
    """Checked options of the fused exact + near dedup (the text config's `dedup:` section)."""
    exact: bool
    near: bool
    num_perm: int
    bands: int
    rows: int
    threshold: float
    ngram: int
    seed: int
    verify: str
    bucket_partitions: int
    batch_size: int


def fused_params(exact: bool = True, near: bool = True, num_perm: int = 128, bands: int | None = None,
                 rows: int | None = None, threshold: float = 0.8, ngram: int = 5, seed: int = 1,
                 verify: str = DEFAULT_VERIFY, bucket_partitions: int = 256, batch_size: int = 1024,
                 max_rounds: int | None = None) -> FusedParams:
    """Options -> FusedParams, or a ConfigError saying which is wrong. `max_rounds` belongs to the
    keyed path's connected components; it is accepted so one config serves both modes."""
    try:
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    except (TypeError, ValueError) as e:
        raise ConfigError(f"dedup: {e}") from None
    bands, rows = near_params(num_perm, bands, rows, threshold, ngram, verify, "dedup")
    return FusedParams(bool(exact), bool(near), num_perm, bands, rows, threshold, ngram, seed, verify,
                       max(1, int(bucket_partitions or 1)), int(batch_size))


def key_of(row: dict, key_field: str) -> str:
    k = row.get(key_field)
    return "" if k is None else str(k)


def with_marks(row: dict, cluster: str, size: int, keep: bool, reason: str | None) -> dict:
    """A copy of `row` with the four dedup fields. An earlier exact pass's reason wins."""
    out = dict(row)
    prior = row.get("dedup_reason")
    if not keep and prior == EXACT_DUPLICATE:  # composition with an earlier ExactDedup
        reason = prior
    out.update(dedup_cluster=cluster, dedup_cluster_size=int(size), dedup_keep=bool(keep), dedup_reason=reason)
    return out


def key_hash(key: str) -> int:
    """63-bit hash of a document key: what band entries and candidate pairs carry instead of the
    key itself (8 bytes, where ids are often 40-character hex digests). Two keys with the same
    hash only meet more candidates; verification compares the real keys' data."""
    return xxhash.xxh64_intdigest(key.encode("utf-8", "surrogatepass")) & _MASK63


def band_partitions(buckets: np.ndarray, fps: np.ndarray, khs: np.ndarray, bands: int, partitions: int):
    """A batch's band entries grouped by partition (bucket id modulo `partitions`), packed as three
    byte strings per partition (bucket ids, fingerprints, key hashes): one element per partition
    crosses the shuffle instead of one per (document, band)."""
    ids = buckets.ravel()
    doc = np.repeat(np.arange(len(khs)), bands)
    part = ids % np.uint64(partitions)
    order = np.argsort(part, kind="stable")
    cuts = np.flatnonzero(np.diff(part[order])) + 1
    for sel in np.split(order, cuts):
        docs = doc[sel]
        yield int(part[sel[0]]), (ids[sel].tobytes(), fps[docs].tobytes(), khs[docs].tobytes())


def partition_pairs(item) -> list[tuple[int, int]]:
    """(partition, packs) -> the distinct candidate pairs of all its buckets, sorted: the pairs
    candidate_pairs proposes for every bucket (the entries of one bucket id with two or more
    entries, from packs of three byte strings as band_partitions writes them), computed in numpy
    over the whole partition (no Python tuple per band entry). Only a bucket with three or more
    distinct signatures goes through candidate_pairs's own loop."""
    packs = list(item[1])   # a shuffle's values: read three times below
    if not packs:
        return []
    ids = np.concatenate([np.frombuffer(i, dtype=np.uint64) for i, _, _ in packs])
    fps = np.concatenate([np.frombuffer(f, dtype=np.uint32) for _, f, _ in packs])
    keys = np.concatenate([np.frombuffer(k, dtype=np.uint64) for _, _, k in packs])
    shared = _in_shared_buckets(ids)
    ids, fps, keys = ids[shared], fps[shared], keys[shared]
    o = np.lexsort((keys, fps, ids))
    ids, fps, keys = ids[o], fps[o], keys[o]
    distinct = _starts(ids, fps, keys)
    ids, fps, keys = ids[distinct], fps[distinct], keys[distinct]
    # one signature in one bucket: every other key links to the smallest (its head)
    group = _starts(ids, fps)
    heads_at = np.cumsum(group) - 1
    los, his = [keys[group][heads_at[~group]]], [keys[~group]]
    # the heads of one bucket, in key order: two give one pair, more go through candidate_pairs
    hid, heads = ids[group], keys[group]
    o = np.lexsort((heads, hid))
    hid, heads = hid[o], heads[o]
    first = np.flatnonzero(_starts(hid))
    size = np.diff(np.append(first, len(hid)))
    two = first[size == 2]
    los.append(heads[two]), his.append(heads[two + 1])
    lo, hi = np.concatenate(los), np.concatenate(his)
    o = np.lexsort((hi, lo))
    lo, hi = lo[o], hi[o]
    keep = _starts(lo, hi)
    pairs = list(zip(lo[keep].tolist(), hi[keep].tolist()))
    many = first[size > 2]
    if len(many):
        more = set(pairs)
        for at, n in zip(many.tolist(), size[size > 2].tolist()):
            ks = heads[at:at + n].tolist()   # distinct signatures' heads: the pairs candidate_pairs gives them
            more.update(candidate_pairs((None, list(zip(ks, range(n))))))
        pairs = sorted(more)
    return pairs


def _starts(*cols: np.ndarray) -> np.ndarray:
    """Per position of sorted columns: True where the tuple of values differs from the previous one."""
    out = np.ones(len(cols[0]), dtype=bool)
    if len(out) > 1:
        out[1:] = np.any([c[1:] != c[:-1] for c in cols], axis=0)
    return out


def _in_shared_buckets(ids: np.ndarray) -> np.ndarray:
    """Mask of the entries whose bucket id occurs more than once (only those can pair)."""
    o = np.argsort(ids, kind="stable")
    s = ids[o]
    dup = np.zeros(len(ids), dtype=bool)
    if len(ids) > 1:
        eq = s[1:] == s[:-1]
        dup[o[1:][eq]] = True
        dup[o[:-1][eq]] = True
    return dup


def candidate_pairs(item):
    """Bucket -> candidate pairs (a, b), a < b, of key hashes. Identical signatures link to their
    smallest key; small buckets propose every pair, large ones a chain and a star."""
    _, members = item
    by_fp: dict[int, set] = {}
    for key, fp in members:
        by_fp.setdefault(fp, set()).add(key)
    if sum(len(v) for v in by_fp.values()) < 2:
        return
    heads = []
    for keys in by_fp.values():  # identical signatures: link to their smallest key
        ks = sorted(keys)
        heads.append(ks[0])
        for k in ks[1:]:
            yield ks[0], k
    heads.sort()
    if len(heads) <= SMALL_BUCKET:
        for i in range(len(heads)):
            for j in range(i + 1, len(heads)):
                yield heads[i], heads[j]
    else:
        for i in range(1, len(heads)):
            yield heads[0], heads[i]
            if i > 1:
                yield heads[i - 1], heads[i]


def prepare_batch(batch: Iterable[dict], text_field: str, key_field: str, exact: bool, hasher: MinHasher | None,
                  ngram: int, bands: int, rows: int, partitions: int, keep_data: str | None = None
                  ) -> tuple[list, list, list]:
    """Rows -> ([(exact hash, key)], [(partition, packed band entries)], [(key hash, key, data)]).
    One normalisation per text; rows whose text normalises to nothing take no part. `hasher`
    None: no near dedup. The third list holds each near-dedup row's verification data, as
    `candidate_data` would derive it again, when `keep_data` names it ("exact": the distinct
    shingle hashes, "signature": the signature); else it is empty. The compiled kernel
    (filters/dedup_native.py) does the per-text work where it is built; the numpy path gives the
    same values."""
    exact_items, keys, sigs, set_list = _prepared(list(batch), text_field, key_field, exact, hasher, ngram)
    if not keys:
        return exact_items, [], []
    buckets = band_hashes(sigs, bands, rows)
    fps = np.array([xxhash.xxh32_intdigest(s.tobytes()) for s in sigs], dtype=np.uint32)
    khs = np.array([key_hash(k) for k in keys], dtype=np.uint64)
    kept = []
    if keep_data is not None:
        data = sigs if keep_data == "signature" else set_list
        kept = list(zip(khs.tolist(), keys, (d.tobytes() for d in data)))
    return exact_items, list(band_partitions(buckets, fps, khs, bands, max(1, partitions))), kept


def _prepared(batch: list[dict], text_field: str, key_field: str, exact: bool, hasher: MinHasher | None,
              ngram: int) -> tuple[list, list, np.ndarray | None, list]:
    """(exact items, keys of the near-dedup rows, their signatures, their distinct shingle sets):
    the compiled kernel's where it is built, else the numpy path's (the same values)."""
    prepared = _prepared_native if dedup_native.available() else _prepared_numpy
    return prepared(batch, text_field, key_field, exact, hasher, ngram)


def _prepared_numpy(batch: list[dict], text_field: str, key_field: str, exact: bool, hasher: MinHasher | None,
                    ngram: int) -> tuple[list, list, np.ndarray | None, list]:
    """`_prepared` in numpy and Python: the reference."""
    exact_items, keys, spaced = [], [], []
    for row in batch:
        text = row.get(text_field)
        norm = normalize_text(text if isinstance(text, str) else None)
        if not norm:
            continue
        key = key_of(row, key_field)
        if exact:
            exact_items.append((hash_normalized(norm), key))
        if hasher is not None:
            keys.append(key)
            spaced.append(spaced_words(norm))
    if not keys:
        return exact_items, keys, None, []
    flat, counts = shingle_hashes_spaced(spaced, ngram)
    sets, set_counts = distinct_per_document(flat, counts)
    del flat, spaced
    set_list = np.split(sets, np.cumsum(set_counts)[:-1])
    return exact_items, keys, hasher.signatures(set_list), set_list


_NATIVE_CHUNK_CHARS = 8 << 20  # text per kernel call: bounds its buffers (~6 bytes per character)


def _prepared_native(batch: list[dict], text_field: str, key_field: str, exact: bool, hasher: MinHasher | None,
                     ngram: int) -> tuple[list, list, np.ndarray | None, list]:
    """`_prepared_numpy` with the per-text work in the compiled kernel: equal values. A batch of
    long texts goes to the kernel in chunks of about _NATIVE_CHUNK_CHARS characters."""
    chunks, chunk, size = [], [], 0
    for row in batch:
        text = row.get(text_field)
        n = len(text) if isinstance(text, str) else 0
        if chunk and size + n > _NATIVE_CHUNK_CHARS:
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(row)
        size += n
    parts = [_prepared_chunk(c, text_field, key_field, exact, hasher, ngram) for c in chunks + [chunk]]
    if len(parts) == 1:
        return parts[0]
    sigs = [p[2] for p in parts if p[2] is not None]
    return ([x for p in parts for x in p[0]], [k for p in parts for k in p[1]],
            np.concatenate(sigs) if sigs else None, [d for p in parts for d in p[3]])


def _prepared_chunk(batch: list[dict], text_field: str, key_field: str, exact: bool, hasher: MinHasher | None,
                    ngram: int) -> tuple[list, list, np.ndarray | None, list]:
    buf, off, flags = dedup_native.normalize_batch([row.get(text_field) for row in batch])
    bounds = off.tolist()
    view = memoryview(buf)
    exact_items, keys, near_rows = [], [], []
    for i, row in enumerate(batch):
        lo, hi = bounds[i], bounds[i + 1]
        if lo == hi:
            continue
        key = key_of(row, key_field)
        if exact:
            exact_items.append((xxhash.xxh3_128_hexdigest(view[lo:hi]), key))  # = hash_normalized
        if hasher is not None:
            keys.append(key)
            near_rows.append(i)
    if not keys:
        return exact_items, keys, None, []
    buf, off = dedup_native.spaced_batch(buf, off, flags)  # words joined by spaces, as split_words splits them
    sigs, sets, set_counts = dedup_native.signatures_batch(buf, off, ngram, hasher.a, hasher.b)
    rows_at = np.array(near_rows, dtype=np.int64)  # rows that normalise to nothing have no shingle
    set_counts = set_counts[rows_at]
    return exact_items, keys, sigs[rows_at], np.split(sets, np.cumsum(set_counts)[:-1])


_SET_ONLY = MinHasher(1, 1)  # verification by shingle sets: the signature is not used


def partner_index(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """Distinct candidate pairs (a, b) of key hashes -> {key hash: sorted partner key hashes}."""
    index: dict[int, list[int]] = {}
    for a, b in pairs:
        index.setdefault(a, []).append(b)
        index.setdefault(b, []).append(a)
    return {k: sorted(v) for k, v in index.items()}


GROUP = -1  # second half of a verification key that names a group of documents, not a pair
VERIFY_GROUP_CAP = 256  # key hashes at most in one verification group


def verify_groups(index: dict[int, list[int]], cap: int = VERIFY_GROUP_CAP) -> dict[int, int]:
    """{key hash: its group} for the key hashes of every connected component of the candidate
    graph with 3 to `cap` of them; group = the component's smallest key hash.

    Why: verification brings both documents' shingle sets together. Keyed by pair, a document's set
    travels once per candidate pair it is in (12,361 pairs of 6,558 documents at 28,534 documents);
    keyed by component, once. A component of two is one pair either way, so it stays keyed by pair
    and takes no room here (a corpus of near-duplicate pairs gets an almost empty dict, not one
    entry per candidate document in every worker's side input). A component larger than `cap` (a
    large family of near copies) stays keyed by pair too, so no verification task holds more than
    `cap` documents' sets."""
    uf = UnionFind()
    for a, partners in index.items():
        for b in partners:
            if a < b:
                uf.union(a, b)
    return {kh: root for root, members in uf.components().items() if 3 <= len(members) <= cap for kh in members}


def candidate_data(batch: Iterable[dict], index: dict[int, list[int]], text_field: str, key_field: str, ngram: int,
                   hasher: MinHasher | None, groups: dict[int, int] | None = None
                   ) -> Iterator[tuple[tuple[int, int], tuple]]:
    """Rows -> their verification data under the keys that verify_pair groups: (group, GROUP) once
    for a document in one of `groups` (verify_groups), else (a, b) once per candidate pair it is
    in (by_pair). Data: the sorted distinct shingle hashes, or the signature when `hasher` is given
    (verify="signature"), as uint32 bytes. Candidates of a batch are shingled together."""
    if not index:
        return
    candidates = [row for row in batch if index.get(key_hash(key_of(row, key_field)))]
    if not candidates:
        return
    _, keys, sigs, sets = _prepared(candidates, text_field, key_field, False, hasher or _SET_ONLY, ngram)
    data = sets if hasher is None else list(sigs)
    yield from by_pair(((key_hash(k), k, d.tobytes()) for k, d in zip(keys, data)), index, groups)


def by_pair(members: Iterable[tuple[int, str, bytes]], index: dict[int, list[int]],
            groups: dict[int, int] | None = None) -> Iterator[tuple[tuple[int, int], tuple]]:
    """(key hash, key, data) of documents -> ((a, b), member) once per candidate pair (partner_index)
    the document is in; a document in `groups` instead once as ((group, GROUP), member + (its
    partners,))."""
    for kh, key, data in members:
        if groups and kh in groups:
            yield (groups[kh], GROUP), (kh, key, data, index[kh])
            continue
        for p in index.get(kh, ()):
            yield (min(kh, p), max(kh, p)), (kh, key, data)


def _sides(members: Iterable[tuple]) -> dict[int, dict[str, bytes]]:
    """Members -> {key hash: {key: data}}. One key twice (duplicate ids, different text): the
    smallest data bytes, as the keyed path picks."""
    sides: dict[int, dict[str, bytes]] = {}
    for kh, key, data, *_ in members:
        side = sides.setdefault(kh, {})
        if key not in side or data < side[key]:
            side[key] = data
    return sides


def _pair_edges(side_a: dict[str, bytes], side_b: dict[str, bytes], threshold: float,
                similarity: Callable[[np.ndarray, np.ndarray], float]):
    other = [(kb, np.frombuffer(db, dtype=np.uint32)) for kb, db in sorted(side_b.items())]
    for ka, da in sorted(side_a.items()):
        va = np.frombuffer(da, dtype=np.uint32)
        for kb, vb in other:
            if ka != kb and similarity(va, vb) >= threshold:
                yield (min(ka, kb), max(ka, kb), False)


def verify_pair(item, threshold: float, similarity: Callable[[np.ndarray, np.ndarray], float]):
    """((a, b), members) -> edges (smaller key, larger key, False) between a-side and b-side
    documents whose similarity >= threshold; ((group, GROUP), members) -> the same for every
    candidate pair inside the group (each member carries its partners)."""
    (a, b), members = item
    if b != GROUP:
        sides = _sides(members)
        yield from _pair_edges(sides.get(a, {}), sides.get(b, {}), threshold, similarity)
        return
    members = list(members)
    sides = _sides(members)
    partners = {m[0]: m[3] for m in members}
    for ka in sorted(sides):
        for kb in partners[ka]:
            if kb > ka:
                yield from _pair_edges(sides[ka], sides.get(kb, {}), threshold, similarity)


def exact_edges(item):
    """(hash, keys) -> (root, key, True) for every other distinct key of an exact group."""
    _, keys = item
    keys = sorted(set(keys))
    for k in keys[1:]:
        yield keys[0], k, True


def add_edge(uf: UnionFind, exact_dups: set, edge: tuple[str, str, bool]) -> None:
    """One edge into the clusters. "Exact duplicate" = an exact edge names the key as its larger
    end, i.e. a smaller key has the same normalised text."""
    a, b, exact = edge
    uf.union(a, b)
    if exact:
        exact_dups.add(b)


def cluster_labels(uf: UnionFind, exact_dups: set) -> dict[str, tuple[str, int, bool]]:
    """{key: (root, cluster size, exact duplicate?)} for every key on an edge."""
    roots = {x: uf.find(x) for x in list(uf.parent)}
    sizes: dict[str, int] = {}
    for r in roots.values():
        sizes[r] = sizes.get(r, 0) + 1
    return {x: (r, sizes[r], x in exact_dups) for x, r in roots.items()}


def mark_row(row: dict, labels: dict, key_field: str) -> dict:
    """A row with its dedup fields from the cluster labels (a row in no label is its own cluster)."""
    key = key_of(row, key_field)
    hit = labels.get(key)
    if hit is None:
        return with_marks(row, key, 1, True, None)
    root, size, exact_dup = hit
    keep = key == root
    return with_marks(row, root, size, keep, None if keep else (EXACT_DUPLICATE if exact_dup else NEAR_DUPLICATE))


def batch_preparer(text_field: str, key_field: str, p: FusedParams) -> Callable[[Iterable[dict]], tuple]:
    """`prepare_batch` with the job's options bound: rows -> (exact items, band packs, verification
    data), for fused_dedup_rows to combine. Picklable, so a worker process can run it on the rows
    it has just scored (pipelines/local_workers.py)."""
    hasher = MinHasher(p.num_perm, p.seed) if p.near else None
    return functools.partial(prepare_batch, text_field=text_field, key_field=key_field, exact=p.exact,
                             hasher=hasher, ngram=p.ngram, bands=p.bands, rows=p.rows,
                             partitions=1,  # one partition: the buckets are the same
                             keep_data=p.verify)


def fused_dedup_rows(rows: list[dict], text_field: str, key_field: str, p: FusedParams,
                     map_batches: Callable = map, prepared: Iterable[tuple] | None = None) -> list[dict]:
    """Every row, marked, in one process: the steps of pipelines/dedup_fused.py in order, with
    dicts where Beam shuffles. `map_batches(fn, batches)` may spread the per-batch preparation
    over processes (results in batch order); the rest runs here. `prepared`: batch_preparer's
    results over exactly these rows, in any batching, made elsewhere (then nothing is prepared
    here). Memory: the rows, 4 bytes per distinct shingle of each document (its verification data,
    kept instead of shingling candidate documents twice), and the band entries (20 bytes per band
    and document)."""
    if (p.exact or p.near) and prepared is None:
        batches = [[{text_field: r.get(text_field), key_field: r.get(key_field)} for r in rows[i:i + p.batch_size]]
                   for i in range(0, len(rows), p.batch_size)]  # only what preparation reads crosses to a worker
        prepared = map_batches(batch_preparer(text_field, key_field, p), batches)
    labels = fused_labels(prepared or (), p)
    return [mark_row(r, labels, key_field) for r in rows]


def fused_labels(prepared: Iterable[tuple], p: FusedParams,
                 members_of: Callable[[dict], Iterable[tuple]] | None = None) -> dict[str, tuple[str, int, bool]]:
    """batch_preparer's results over every row of a corpus -> the cluster labels (cluster_labels:
    only documents in clusters of two or more), which `mark_row` turns into each row's marks
    wherever that row is. Empty when neither exact nor near dedup is on. `members_of(partner
    index)`: the (pair, member) items of the candidate documents (by_pair), for a caller whose
    verification data is elsewhere (pipelines/text_held.py); by default by_pair over the
    prepared results' own."""
    if not (p.exact or p.near):
        return {}
    exact_groups: dict[str, list[str]] = defaultdict(list)
    packs: list = []
    kept: list = []  # (key hash, key, verification data) per near-dedup row: no second shingling
    for exact_items, band_items, batch_kept in prepared:
        for h, key in exact_items:
            exact_groups[h].append(key)
        packs.extend(pack for _, pack in band_items)
        kept.extend(batch_kept)
    uf, exact_dups = UnionFind(), set()
    for item in exact_groups.items():
        for edge in exact_edges(item):
            add_edge(uf, exact_dups, edge)
    if p.near:
        index = partner_index(partition_pairs((0, packs)))
        members: dict[tuple[int, int], list] = defaultdict(list)
        if index:
            for pair, member in (members_of(index) if members_of is not None else by_pair(kept, index)):
                members[pair].append(member)
        del kept
        similarity = similarity_for(p.verify)
        for item in members.items():
            for edge in verify_pair(item, p.threshold, similarity):
                add_edge(uf, exact_dups, edge)
    return cluster_labels(uf, exact_dups)
