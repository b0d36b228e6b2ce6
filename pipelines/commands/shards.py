"""`cidermill shards info|verify|head DIR`: inspect and check a shard dataset."""
from __future__ import annotations

import json
import sys

HELP = "inspect a shard dataset: info (kind, rows, schema, provenance), verify (sizes, checksums), head (first rows)"
BEAM = False


def configure(p):
    sub = p.add_subparsers(dest="shards_cmd", metavar="info|verify|head", required=True)
    i = sub.add_parser("info", help="kind, rows, shards, schema and provenance")
    i.add_argument("dir")
    i.add_argument("--json", action="store_true", help="print the manifest as JSON")
    v = sub.add_parser("verify", help="recompute sizes and sha256 of every shard; exit 1 naming each bad shard")
    v.add_argument("dir")
    v.add_argument("--fast", action="store_true", help="sizes, schema and rows only, no checksums")
    h = sub.add_parser("head", help="print the first rows as JSON lines (long values shortened)")
    h.add_argument("dir")
    h.add_argument("-n", type=int, default=5, help="rows to print (default 5)")
    h.add_argument("--columns", help="comma-separated columns to show")
    h.add_argument("--width", type=int, default=200, help="shorten strings longer than this (0 = never)")


def _short(v, width):
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    if isinstance(v, str) and width and len(v) > width:
        return v[:width] + f"… (+{len(v) - width} chars)"
    if isinstance(v, dict):
        return {k: _short(x, width) for k, x in v.items()}
    if isinstance(v, list):
        out = [_short(x, width) for x in v[:20]]
        return out + [f"… (+{len(v) - 20} items)"] if len(v) > 20 else out
    return v


def run(args, beam_args) -> int:
    from corpus.errors import CidermillError
    from corpus.manifest import read_manifest

    if args.shards_cmd == "info":
        m = read_manifest(args.dir)
        if args.json:
            print(json.dumps(m.to_json(), indent=1))
            return 0
        total = sum(s.bytes for s in m.shards)
        print(f"dataset   {args.dir}")
        print(f"kind      {m.kind}")
        print(f"rows      {m.rows}")
        print(f"shards    {len(m.shards)} ({total / 1e6:.2f} MB)")
        print("schema")
        for f in m.schema:
            print(f"  {f.name}: {f.type}")
        print("provenance")
        for k, val in m.provenance.items():
            print(f"  {k}: {json.dumps(val, default=str)[:300]}")
        return 0
    if args.shards_cmd == "verify":
        from corpus.verify import verify_dataset
        problems = verify_dataset(args.dir, check_hashes=not args.fast)
        m = read_manifest(args.dir)
        if problems:
            for pr in problems:
                print(f"BAD  {pr}", file=sys.stderr)
            raise CidermillError(f"{args.dir}: {len(problems)} problem(s) in {len(m.shards)} shard(s)")
        print(f"OK   {args.dir}: {len(m.shards)} shard(s), {m.rows} rows, "
              f"{'sizes+schema' if args.fast else 'sha256'} verified")
        return 0
    if args.shards_cmd == "head":
        from corpus.reader import open_dataset
        ds = open_dataset(args.dir)
        cols = [c.strip() for c in args.columns.split(",")] if args.columns else None
        if cols:
            missing = [c for c in cols if c not in ds.schema.names]
            if missing:
                raise CidermillError(f"{args.dir}: no column(s) {missing}; columns are {ds.schema.names}")
        for i, row in enumerate(ds.iter_rows(cols)):
            if i >= args.n:
                break
            print(json.dumps(_short(row, args.width), ensure_ascii=False, default=str))
        return 0
    return 2
