"""`cidermill synth math|code`: the Beam job's datasets, reports, process split, decontamination, errors."""
from __future__ import annotations

import json

import pytest

from corpus.errors import ConfigError
from corpus.reader import ShardDataset
from corpus.report import read_report, read_samples
from corpus.schemas import VERIFIED
from corpus.verify import verify_dataset
from pipelines.cli import main
from pipelines.verified_synth_pipeline import Decontaminator, VerifiedConfig, run_verified
from synth.math_items import generate_problem, make_math_item
from synth.verified_heldout import HELDOUT_SEED
from synth.verified_item import eval_key


@pytest.mark.slow
def test_math_dataset_process_split_and_eval_set_decontamination(tmp_path):
    n = 16
    items = [make_math_item(0, i) for i in range(n)]
    leaked = next(it for it in items if it.row and len(it.row["problem"].split()) > 12)
    evals = tmp_path / "evals.jsonl"
    evals.write_text(json.dumps({"question": leaked.row["problem"].splitlines()[-1] + " " + leaked.row["problem"],
                                 "answer": "42"}) + "\n")
    out, proc = str(tmp_path / "math"), str(tmp_path / "process")
    s = run_verified("math", n, out, seed=0, process_out=proc, eval_sets=[str(evals)], decontam_ngram=8,
                     heldout_n=20)
    ds = ShardDataset(out)
    assert ds.schema.equals(VERIFIED) and not verify_dataset(out)
    rows = {r["id"]: r for r in ds.iter_rows()}
    assert leaked.id not in rows and s["dropped"].get("decontam:eval_ngram_overlap", 0) >= 1
    assert s["generated"] == n == s["rows"] + sum(s["dropped"].values())
    # rows are exactly what the library makes for the same (seed, index)
    for it in items:
        if it.id in rows:
            assert rows[it.id] == it.row
    st = read_report(out).stages["synth_math"]
    assert st.rows_in == n and any(k.startswith("language:") for k in st.counters)
    assert "decontam_eval_ngram_overlap" in read_samples(out)
    prows = list(ShardDataset(proc).iter_rows())
    assert len(prows) == 2 * len(rows) == s["process_rows"]
    for r in prows:
        labels = [x["correct"] for x in r["steps"]]
        assert all(labels) if r["id"].endswith("-clean") else labels.count(False) == 1
    pst = read_report(proc).stages["synth_math_process"]
    assert pst.counters["steps_incorrect"] == len(rows)


def test_heldout_items_are_dropped_by_exact_match():
    d = Decontaminator(VerifiedConfig("math", 1, heldout_n=5))
    p = generate_problem(HELDOUT_SEED, 3)
    assert d.reason(eval_key("  " + p.problem.upper()), p.problem) == "decontam:heldout_exact"
    assert d.reason(eval_key(generate_problem(0, 3).problem), "x") is None


@pytest.mark.slow
def test_code_through_the_cli(tmp_path, capsys):
    out = str(tmp_path / "code")
    assert main(["synth", "code", "--n", "4", "--out", out, "--families", "list,dict", "--heldout-n", "0",
                 "--buggy-share", "0"]) == 0
    line = capsys.readouterr().out
    assert "synth code: 4 generated" in line
    rows = list(ShardDataset(out).iter_rows())
    assert rows and all(r["kind"] == "code" and r["family"].split(".")[1] in ("list", "dict") for r in rows)
    for r in rows:
        checks = json.loads(r["checks_json"])
        assert checks["sandbox"]["status"] == "ok" and checks["mutant"]["reason"] != "passed"


@pytest.mark.parametrize("kind, kw, msg", [
    ("math", {"seed": HELDOUT_SEED}, "reserved"),
    ("code", {"process_out": "x"}, "--process-out"),
    ("code", {"families": ["nope"]}, "nope"),
    ("math", {"languages": ["xx"]}, "xx"),
    ("math", {"eval_sets": ["/no/such/file.jsonl"]}, "not found"),
])
def test_bad_options_are_one_line_errors(tmp_path, kind, kw, msg):
    seed = kw.pop("seed", 0)
    with pytest.raises(ConfigError, match=msg):
        run_verified(kind, 2, str(tmp_path / "o"), seed=seed, **kw)
