"""`cidermill model info PRESET`: parameters, KV bytes per token, sync points, from the meta device."""
import json

from pipelines.cli import main


def test_model_info_ptmoe_1b(capsys):
    assert main(["model", "info", "ptmoe-1b"]) == 0
    out = capsys.readouterr().out
    assert "total 1,130,775,552" in out and "active per token" in out
    assert "4 per forward (L/D = 16/4) vs 2L = 32" in out and "87.5% fewer" in out
    assert "B/token bf16" in out


def test_model_info_ondevice_json(capsys):
    assert main(["model", "info", "ondevice-3b", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kv_bf16"]["per_token"] == 35_840
    assert info["kv_bf16_dense_twin"]["per_token"] == 57_344
    assert info["sync_points"] == 112 and info["config"]["block1_layers"] == 35


def test_model_info_unknown_preset_is_one_line(capsys):
    assert main(["model", "info", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown model preset 'nope'" in err and "ptmoe-1b" in err


def test_model_list(capsys):
    assert main(["model", "list"]) == 0
    out = capsys.readouterr().out
    assert "tiny" in out and "ondevice-3b" in out and "ptmoe-small" in out
