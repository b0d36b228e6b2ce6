"""`cidermill train --recipe`: stages in order, exact resume inside a stage and across a switch,
tokens per source per stage, RoPE base per stage, and recipes refused with the name at fault."""
import json
import os

import numpy as np
import pyarrow as pa
import pytest
import yaml

from corpus.errors import ConfigError
from corpus.schemas import TOKENS
from corpus.writer import write_dataset
from training import checkpoint as ck
from training.recipe import load_recipe, parse_recipe, run_recipe
from training.trainer import read_log


def _tokens(path, seed, step):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(200):
        start, n = int(rng.integers(0, 50)), int(rng.integers(20, 90))
        rows.append({"doc_id": f"{seed}-{i}", "tokens": [(start + step * k) % 200 + 2 for k in range(n)] + [1],
                     "source": "syn", "mixture": "syn"})
    write_dataset(path, "tokens", pa.Table.from_pylist(rows, schema=TOKENS), target_bytes=20000)
    return path


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("recipe")
    return {"web": _tokens(str(d / "web"), 0, 3), "code": _tokens(str(d / "code"), 1, 7)}


def _raw(sources, out):
    return {"name": "two", "sources": sources,
            "model": {"preset": "tiny", "overrides": {"vocab_size": 256, "n_layers": 2}},
            "data": {"batch_size": 4, "eval": {"holdout_permille": 100}},
            "train": {"seed": 0, "out": str(out), "log_every": 2, "eval_every": 3, "eval_batches": 1,
                      "ckpt_every": 4},
            "stages": [
                {"name": "text", "mixture": {"web": 1.0}, "seq_len": 32, "rope_theta": 10000,
                 "lr": {"peak": 3e-3, "warmup_steps": 2}, "tokens": 6 * 32 * 4},
                {"name": "code", "mixture": {"web": 0.5, "code": 0.5}, "seq_len": 48, "rope_theta": 40000,
                 "lr": {"peak": 1e-3, "warmup_steps": 1, "decay": "linear"}, "tokens": 6 * 48 * 4}]}


def _losses(out):
    return {s: [(r["step"], r["loss"]) for r in read_log(os.path.join(out, "stages", s))]
            for s in ("00-text", "01-code")}


def test_recipe_resumes_exactly_inside_a_stage_and_across_the_switch(sources, tmp_path):
    full = run_recipe(parse_recipe(_raw(sources, tmp_path / "full")))
    assert full["finished"] and [s["steps"] for s in full["stages"]] == [6, 6]
    ref = _losses(str(tmp_path / "full"))

    part = tmp_path / "part"
    r = parse_recipe(_raw(sources, part))
    assert not run_recipe(r, stop_after=5)["finished"]        # inside stage 1 (checkpoint at 4)
    assert not run_recipe(r, stop_after=8)["finished"]        # past the switch (stage 2 at its step 2)
    rep = run_recipe(r)                                         # stage 1 done: skipped; stage 2 from scratch
    assert rep["finished"]
    assert _losses(str(part)) == ref                            # bit-exact on CPU
    assert json.load(open(part / "recipe_report.json"))["finished"]

    s1, s2 = rep["stages"]
    assert s1["tokens_by_source"] == {"web": 6 * 32 * 4}
    assert set(s2["tokens_by_source"]) == {"web", "code"} and sum(s2["tokens_by_source"].values()) == 6 * 48 * 4
    assert min(s2["tokens_by_source"].values()) > 0
    assert ck.read_model_config(rep["checkpoint"])["rope_theta"] == 40000.0
    assert ck.read_model_config(ck.latest_checkpoint(s1["run_dir"]))["rope_theta"] == 10000.0


def test_recipe_bad_input_is_refused_with_the_name(sources, tmp_path):
    raw = _raw(sources, tmp_path)
    raw["stages"][1]["mixture"] = {"web": 0.5, "maths": 0.5}
    with pytest.raises(ConfigError, match="stage 'code': source 'maths' is not in the recipe's sources"):
        parse_recipe(raw)
    raw = _raw(sources, tmp_path)
    raw["sources"]["code"] = str(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="stage 'code': source 'code': no token dataset"):
        parse_recipe(raw)
    raw = _raw(sources, tmp_path)
    raw["stages"][0]["mixture"] = {"web": 0.0}
    with pytest.raises(ConfigError, match="stage 'text': mixture weights sum to zero"):
        parse_recipe(raw)
    raw = _raw(sources, tmp_path)
    raw["stages"][1]["seqlen"] = 5
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match="stages\\[1\\].seqlen"):
        load_recipe(str(p))


def test_recipe_refuses_to_resume_a_finished_stage_under_a_changed_config(sources, tmp_path):
    raw = _raw(sources, tmp_path / "r")
    raw["stages"] = raw["stages"][:1]
    raw["stages"][0]["tokens"] = 2 * 32 * 4
    run_recipe(parse_recipe(raw))
    raw["stages"][0]["lr"]["peak"] = 1e-2
    with pytest.raises(ConfigError, match="stage 'text' finished under a different config"):
        run_recipe(parse_recipe(raw))


@pytest.mark.parametrize("name", ["foundation", "demo"])
def test_shipped_recipes_parse(name):
    here = os.path.dirname(__file__)
    r = load_recipe(os.path.join(here, "..", "..", "training", "recipes", f"{name}.yaml"), check_paths=False)
    assert r.stages[0].name == "text" and r.stages[-1].name == "long" and r.stages[-1].buckets
