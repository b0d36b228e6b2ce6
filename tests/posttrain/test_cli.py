"""`cidermill sft data|train|rm`, `rl` (with a reward model) and `eval` end to end on a micro model (real CLI, real shards)."""
from __future__ import annotations

import json

import pytest

from corpus.report import read_report
from pipelines.cli import main
from training.checkpoint import latest_checkpoint, load_trainer_state, save_model_weights
from training.tokenizer import save_tokenizer

from .conftest import micro_model


@pytest.fixture(scope="module")
def base(tmp_path_factory, base_tokenizer):
    d = tmp_path_factory.mktemp("base")
    save_tokenizer(base_tokenizer, str(d / "tok"))
    m = micro_model(base_tokenizer.get_vocab_size(), max_seq_len=1024)
    save_model_weights(m, str(d / "ckpt"))
    return d


def test_sft_rl_eval_from_the_command_line(base, tmp_path, capsys):
    data = str(tmp_path / "data")
    assert main(["sft", "data", "--tokenizer", str(base / "tok"), "--out", data, "--items", "6",
                 "--max-len", "1024", "--preferences", str(tmp_path / "prefs")]) == 0
    out = capsys.readouterr().out
    assert "conversations kept" in out and "preference pairs" in out
    assert read_report(str(tmp_path / "prefs")).stages["preference_pairs"].kept > 0
    sft = str(tmp_path / "sft")
    args = ["sft", "train", "--init", str(base / "ckpt"), "--tokenizer", str(base / "tok"), "--data", data,
            "--out", sft, "--steps", "3", "--batch", "2", "--checkpoint-every", "2", "--lr", "1e-3"]
    assert main(args) == 0
    _, state = load_trainer_state(latest_checkpoint(sft))
    assert state["step"] == 3 and state["stage"] == "sft"
    rm = str(tmp_path / "rm")
    capsys.readouterr()
    assert main(["sft", "rm", "--init", sft, "--pairs", str(tmp_path / "prefs"), "--out", rm, "--steps", "2",
                 "--batch", "2", "--heldout", "0.5"]) == 0
    assert "held-out pair accuracy" in capsys.readouterr().out
    assert 0.0 <= json.load(open(f"{rm}/reward_model.json"))["heldout_accuracy"] <= 1.0
    rl = str(tmp_path / "rl")
    assert main(["rl", "--sft", sft, "--data", data, "--out", rl, "--steps", "2", "--prompts", "2", "--group", "2",
                 "--max-new-tokens", "4", "--candidates", "3", "--keep", "2", "--select-samples", "2",
                 "--select-every", "2", "--reward-model", rm, "--reward-model-weight", "0.5"]) == 0
    # every RL reward now holds the reward model's share, in (0, 0.5], on top of the verifiable one
    assert all(r["reward"] > 0 for r in map(json.loads, open(f"{rl}/posttrain_log.jsonl")) if r["stage"] == "rl")
    capsys.readouterr()
    assert main(["eval", "--checkpoint", rl, "--data", data, "--tasks", "exact,schema,tool", "--limit", "2",
                 "--max-new-tokens", "8", "--json"]) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"exact_accuracy", "schema_parse_rate", "tool_success", "tool_mean_calls"} <= res.keys()
    assert all(0.0 <= res[k] <= 1.0 for k in ("exact_accuracy", "schema_parse_rate", "tool_success"))


def test_bad_arguments_are_one_line_errors(base, tmp_path, capsys):
    assert main(["sft", "data", "--tokenizer", str(base / "tok"), "--out", str(tmp_path / "d"), "--kinds", "qa,poems"]) != 0
    assert main(["eval", "--checkpoint", str(tmp_path), "--data", str(tmp_path), "--tasks", "vibes",
                 "--tokenizer", str(base / "tok")]) != 0
    err = capsys.readouterr().err
    assert "unknown poems" in err and "unknown vibes" in err
    assert "Traceback" not in err
