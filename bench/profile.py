"""Where the CPU goes in one stage of `cidermill text`, by function and by kind of work.

    python bench/profile.py dedup|chain [--docs 2000] [--chunk-words 2000] [--scratch /tmp/cidermill-speed-bench]
                                        [--top 20] [--engine beam|local]

Runs the real job in this process (shards in and out) on the Debian documentation corpus of
bench/debian_corpus.py, under cProfile, on Beam's in-process FnApiRunner (--engine beam, the
default, as the README's tables were made) or on the command's one-process local engine:
  dedup: `stages: [input, dedup]` (exact + near dedup + verification);
  chain: `stages: [input, langid, c4_lines, gopher, repetition]` with English kept (the four
         filters datatrove also has).
It prints two tables: self time grouped by kind (tokenising, hashing/numpy, Arrow and shard I/O,
Beam overhead, (de)serialisation, filters, other), and the functions with the most self time.
Kinds are assigned from the function's module (and, for C builtins, from their name), so they
are an approximation: a builtin's time counts where its name says, not where it was called from.
cProfile adds its own overhead per Python call, which inflates call-heavy code (Beam, small
helpers) relative to C loops; read the shares, not the absolute seconds.
"""
from __future__ import annotations

import os
import sys

if __name__ == "profile":
    # Imported as the standard library's `profile` (a script in bench/ has bench/ first on its
    # path and something imported cProfile): load and become the real module instead.
    import importlib.util
    import sysconfig

    _spec = importlib.util.spec_from_file_location("profile", os.path.join(sysconfig.get_paths()["stdlib"], "profile.py"))
    _real = importlib.util.module_from_spec(_spec)
    sys.modules["profile"] = _real
    _spec.loader.exec_module(_real)  # the definitions below then load harmlessly, unused

HERE = os.path.dirname(os.path.abspath(__file__))
# this file is named like the standard library's `profile`, which cProfile imports: take bench/
# off the path until cProfile has the real one
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402

sys.path.insert(0, HERE)  # after the repository: bench/crawl.py must not hide the crawl package
sys.path.insert(0, os.path.dirname(HERE))

STAGES = {
    "dedup": {"stages": ["input", "dedup"]},
    "chain": {"stages": ["input", "langid", "c4_lines", "gopher", "repetition"], "langid": {"languages": ["en"]}},
}

# (kind, substrings of a module path or builtin name), first match wins
KINDS = [
    ("(de)serialisation", ("pickle", "apache_beam/coders", "json", "dill", "cloudpickle", "marshal")),
    ("Arrow and shard I/O", ("pyarrow", "/corpus/", "shards_io", "report_io", "to_pylist", "from_pylist")),
    ("tokenising / normalising", ("dedup_text.py", "filters/words.py", "unicodedata", "method 'split'",
                                  "method 'lower'", "method 'casefold'", "method 'translate'", "method 'encode'",
                                  "method 'decode'", "method 'join'", "/re.py", "_sre", "re.Pattern", "method 'findall'",
                                  "method 'sub'", "method 'finditer'", "method 'isascii'", "method 'strip'",
                                  "splitlines", "sanitize.py")),
    ("hashing / numpy", ("xxhash", "minhash", "numpy", "dedup_cluster.py", "method 'reduce'", "method 'argsort'",
                         "method 'astype'", "method 'tobytes'", "built-in method builtins.sum")),
    ("filters (scoring)", ("/filters/", "fasttext")),
    ("dedup transforms", ("pipelines/dedup.py",)),
    # inspect.signature is what Beam calls while building and fusing the pipeline (DoFn specs)
    ("Beam overhead", ("apache_beam", "grpc", "threading", "queue.py", "concurrent", "/inspect.py")),
]


def kind_of(filename: str, funcname: str) -> str:
    where = filename if filename != "~" else funcname
    for kind, needles in KINDS:
        if any(n in where for n in needles):
            return kind
    return "other (Python runtime, pipeline glue)"


ENGINES = {"beam": "FnApiRunner", "local": "local"}  # --engine -> the job's --runner


def profile(stage: str, pages: str, scratch: str, engine: str = "beam"):
    from pipelines.text_job import run_text

    out = os.path.join(scratch, f"profile-out-{stage}")
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out + ".rejected", ignore_errors=True)
    prof = cProfile.Profile(time.process_time)  # CPU time of this process, not wall time
    c0, w0 = time.process_time(), time.perf_counter()
    prof.enable()
    summary = run_text(pages, out, overrides=STAGES[stage], beam_args=[f"--runner={ENGINES[engine]}"], overwrite=True,
                       workers="auto" if engine == "beam" else 1)  # the profile sees one process
    prof.disable()
    return prof, summary, time.process_time() - c0, time.perf_counter() - w0


def tables(prof: cProfile.Profile, top: int) -> tuple[list, list, float]:
    st = pstats.Stats(prof)
    by_kind: dict[str, float] = defaultdict(float)
    funcs = []
    total = 0.0
    for (filename, line, name), (_, ncalls, tottime, cumtime, _) in st.stats.items():  # type: ignore[attr-defined]
        k = kind_of(filename, name)
        by_kind[k] += tottime
        total += tottime
        short = filename.split("site-packages/")[-1].replace(os.path.dirname(HERE) + "/", "")
        funcs.append((tottime, cumtime, ncalls, f"{short}:{line}({name})" if filename != "~" else name, k))
    funcs.sort(reverse=True)
    kinds = sorted(by_kind.items(), key=lambda kv: -kv[1])
    return kinds, funcs[:top], total


def main() -> int:
    from debian_corpus import add_chunk_words_flag, pages_dataset

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--scratch", default="/tmp/cidermill-speed-bench")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--engine", choices=sorted(ENGINES), default="beam")
    add_chunk_words_flag(ap)
    ap.add_argument("--save", action="store_true", help="write bench/results/profile_<stage>.json "
                    "(profile_<stage>_local.json with --engine local)")
    ap.add_argument("--pstats", help="also dump the raw profile here (for pstats / snakeviz)")
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    from results import save_result, start_conditions

    pages = pages_dataset(a.scratch, a.docs, a.chunk_words)
    start = start_conditions()
    prof, summary, cpu, wall = profile(a.stage, pages, a.scratch, a.engine)
    if a.pstats:
        prof.dump_stats(a.pstats)
    kinds, funcs, total = tables(prof, a.top)
    print(f"\n{a.stage} ({a.engine} engine): {summary['rows_in']} documents, {cpu:.1f} CPU-s under cProfile ({wall:.1f} s wall), "
          f"kept {summary['kept']}")
    print("\n| kind | self CPU-s | share |\n|---|---:|---:|")
    for k, s in kinds:
        print(f"| {k} | {s:.2f} | {100 * s / total:.0f}% |")
    print("\n| function | self s | cum s | calls | kind |\n|---|---:|---:|---:|---|")
    for tt, ct, n, name, k in funcs:
        print(f"| `{name}` | {tt:.2f} | {ct:.2f} | {n} | {k} |")
    if a.save:
        save_result(f"profile_{a.stage}" + ("_local" if a.engine == "local" else ""), {
            "engine": a.engine, "docs": summary["rows_in"], "cpu_s": cpu, "wall_s": wall,
            "kinds": [{"kind": k, "self_s": s, "share": s / total} for k, s in kinds],
            "functions": [{"function": name, "self_s": tt, "cum_s": ct, "calls": n, "kind": k}
                          for tt, ct, n, name, k in funcs]}, packages=["apache-beam", "pyarrow", "numpy"], start=start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
