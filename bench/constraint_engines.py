"""Which constrained-decoding engine to build on: llguidance, xgrammar, outlines-core on the
project's byte-level BPE, over a schema suite with valid and invalid instances
(bench/data/schema_suite.json: nested objects, array bounds, enums, patterns, numeric ranges,
optional fields, anyOf/oneOf, recursive $ref, and constructs some engines refuse).

Per engine: schemas compiled (a refusal counts as not covered, never as unsound), compile time,
mask time per token (computing the mask at every step of each valid instance), and soundness:
invalid instances whose tokens the engine accepted to the end (should be 0) and valid instances
it rejected. Compact JSON everywhere (no free whitespace).

xgrammar and outlines-core are peers only this bench needs: it installs them (no dependencies:
torch and the rest come from the project's environment) into a venv under --scratch and re-runs
itself there.

    python bench/constraint_engines.py --scratch /work/scratch/gen
Not covered: real-world schema corpora (the suite is small and written by hand), GPU masks,
batched mask filling.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
PEERS = ["xgrammar==0.2.8", "outlines-core==0.2.14", "apache-tvm-ffi==0.1.15.post2"]


def ensure_peers(scratch: str) -> None:
    try:
        import outlines_core  # noqa: F401
        import xgrammar  # noqa: F401
        return
    except ImportError:
        pass
    venv = os.path.join(scratch, "engvenv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        import site
        pth = os.path.join(venv, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}",
                           "site-packages", "cidermill-main.pth")
        with open(pth, "w") as f:
            f.write(site.getsitepackages()[0] + "\n")
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", *PEERS], check=True)
    os.execv(py, [py] + sys.argv)


def tokenizer():
    """The project's byte-level BPE trained on the fixed text the inference tests use."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "inference"))
    from conftest import _corpus
    from training.tokenizer import train_tokenizer
    return train_tokenizer(_corpus(), 512)


class LLGuidance:
    name = "llguidance"

    def __init__(self, tok):
        import llguidance
        self.ll = llguidance
        self.eos = tok.token_to_id("<|endoftext|>")
        self.t = llguidance.LLTokenizer(tok.to_str(), eos_token=self.eos)
        import torch
        self.mask = torch.zeros((tok.get_vocab_size() + 31) // 32, dtype=torch.int32)

    def compile(self, schema):
        g = self.ll.LLMatcher.grammar_from_json_schema(json.dumps(schema), defaults={"whitespace_flexible": False})
        err, msgs = self.ll.LLMatcher.validate_grammar_with_warnings(g, self.t)
        if err:
            raise ValueError(msgs[0].splitlines()[0])
        return g

    def new(self, g):
        return self.ll.LLMatcher(self.t, g, log_level=0)

    def step_mask(self, m):
        m.unsafe_compute_mask_ptr(self.mask.data_ptr(), self.mask.numel() * 4)

    def accept(self, m, tok):
        return m.consume_token(tok)

    def done(self, m):
        return m.is_accepting()


class XGrammar:
    name = "xgrammar"

    def __init__(self, tok):
        import xgrammar as xgr
        self.x = xgr
        self.eos = tok.token_to_id("<|endoftext|>")
        info = xgr.TokenizerInfo([tok.id_to_token(i) for i in range(tok.get_vocab_size())],
                                 vocab_type=xgr.VocabType.BYTE_LEVEL, stop_token_ids=[self.eos])
        self.compiler = xgr.GrammarCompiler(info)
        self.mask = xgr.allocate_token_bitmask(1, info.vocab_size)

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=False,
                                                 separators=(",", ":"), strict_mode=True)

    def new(self, g):
        return self.x.GrammarMatcher(g)

    def step_mask(self, m):
        m.fill_next_token_bitmask(self.mask)

    def accept(self, m, tok):
        return m.accept_token(tok)

    def done(self, m):
        return m.accept_token(self.eos)


class OutlinesCore:
    name = "outlines-core"

    def __init__(self, tok):
        import outlines_core as oc
        from outlines_core.json_schema import build_regex_from_schema
        self.oc, self.regex = oc, build_regex_from_schema
        self.eos = tok.token_to_id("<|endoftext|>")
        vmap: dict[str, list[int]] = {}
        for t, i in tok.get_vocab().items():
            if i != self.eos:
                vmap.setdefault(t, []).append(i)
        self.vocab = oc.Vocabulary(self.eos, vmap)
        import torch
        self.mask = torch.zeros((tok.get_vocab_size() + 31) // 32, dtype=torch.int32)

    def compile(self, schema):
        return self.oc.Index(self.regex(json.dumps(schema), ""), self.vocab)

    def new(self, g):
        return self.oc.Guide(g)

    def step_mask(self, m):
        m.write_mask_into(self.mask.data_ptr(), self.mask.numel(), 4)

    def accept(self, m, tok):
        try:
            m.advance(tok)
            return True
        except Exception:  # noqa: BLE001  a refused token raises
            return False

    def done(self, m):
        return m.is_finished() or self.eos in m.get_tokens()


ENGINES = {"llguidance": LLGuidance, "xgrammar": XGrammar, "outlines-core": OutlinesCore}


def evaluate(engine_name: str, case: dict, q) -> None:
    """In a child process (a compile that never ends is killed by the parent)."""
    tok = tokenizer()
    eng = ENGINES[engine_name](tok)
    res = {"schema": case["name"]}
    t = time.perf_counter()
    try:
        g = eng.compile(case["schema"])
    except Exception as e:  # noqa: BLE001
        res.update(compiled=False, error=str(e).splitlines()[0][:160])
        q.put(res)
        return
    res.update(compiled=True, compile_ms=1000 * (time.perf_counter() - t))
    mask_times, valid_rejected, invalid_accepted = [], 0, 0
    for inst in case["valid"]:
        m = eng.new(g)
        ok = True
        for i in tok.encode(json.dumps(inst, separators=(",", ":"))).ids:
            t = time.perf_counter()
            eng.step_mask(m)
            mask_times.append(time.perf_counter() - t)
            if not eng.accept(m, i):
                ok = False
                break
        valid_rejected += not (ok and eng.done(m))
    for inst in case["invalid"]:
        m = eng.new(g)
        ok = all(eng.accept(m, i) for i in tok.encode(json.dumps(inst, separators=(",", ":"))).ids)
        invalid_accepted += bool(ok and eng.done(m))
    res.update(mask_us=1e6 * statistics.median(mask_times) if mask_times else None,
               valid_rejected=valid_rejected, invalid_accepted=invalid_accepted,
               n_valid=len(case["valid"]), n_invalid=len(case["invalid"]))
    q.put(res)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default="/work/scratch/gen")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per schema compile + check")
    args = ap.parse_args()
    ensure_peers(args.scratch)
    from bench.results import save_result, start_conditions
    with open(os.path.join(ROOT, "bench", "data", "schema_suite.json")) as f:
        suite = json.load(f)
    start = start_conditions()
    ctx = mp.get_context("fork")
    table = {}
    for name in ENGINES:
        rows = []
        for case in suite:
            q = ctx.Queue()
            p = ctx.Process(target=evaluate, args=(name, case, q))
            p.start()
            p.join(args.timeout)
            if p.is_alive():
                p.kill()
                p.join()
                rows.append({"schema": case["name"], "compiled": False, "error": f"timed out after {args.timeout:g} s"})
            else:
                rows.append(q.get() if not q.empty() else {"schema": case["name"], "compiled": False,
                                                           "error": f"crashed (exit {p.exitcode})"})
        ok = [r for r in rows if r["compiled"]]
        summary = {"compiled": len(ok), "schemas": len(rows),
                   "invalid_accepted": sum(r["invalid_accepted"] for r in ok),
                   "invalid_checked": sum(r["n_invalid"] for r in ok),
                   "valid_rejected": sum(r["valid_rejected"] for r in ok),
                   "valid_checked": sum(r["n_valid"] for r in ok),
                   "compile_ms_median": statistics.median(r["compile_ms"] for r in ok) if ok else None,
                   "compile_ms_max": max(r["compile_ms"] for r in ok) if ok else None,
                   "mask_us_median": statistics.median(r["mask_us"] for r in ok if r["mask_us"]) if ok else None}
        table[name] = {"summary": summary, "rows": rows}
        print(f"{name:<14} schemas {summary['compiled']}/{summary['schemas']}  invalid accepted "
              f"{summary['invalid_accepted']}/{summary['invalid_checked']}  valid rejected "
              f"{summary['valid_rejected']}/{summary['valid_checked']}  compile median "
              f"{summary['compile_ms_median'] or 0:.1f} ms (max {summary['compile_ms_max'] or 0:.0f})  "
              f"mask {summary['mask_us_median'] or 0:.0f} us/token", flush=True)
        for r in rows:
            if not r["compiled"]:
                print(f"    refused {r['schema']}: {r['error']}")
            elif r["invalid_accepted"] or r["valid_rejected"]:
                print(f"    {r['schema']}: invalid accepted {r['invalid_accepted']}, valid rejected {r['valid_rejected']}")
    s = {k: v["summary"] for k, v in table.items()}
    save_result("constraint_engines", {"engines": table, "headline": [
        {"what": f"constraint engines on the project BPE, {len(suite)}-schema suite: schemas compiled / invalid instances accepted",
         "figure": "; ".join(f"{k} {v['compiled']}/{v['schemas']}, {v['invalid_accepted']}/{v['invalid_checked']} unsound, "
                             f"mask {v['mask_us_median'] or 0:.0f} us" for k, v in s.items()),
         "target": "0 unsound (llguidance chosen)"}]},
        packages=["llguidance", "xgrammar", "outlines-core"], start=start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
