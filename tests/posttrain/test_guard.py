"""`generate --guard`: the safety filter on prompt and output, a typed refusal instead of text."""
from __future__ import annotations

import json

from inference.guard import Guard
from pipelines.cli import main
from training.checkpoint import save_model_weights
from training.tokenizer import save_tokenizer

from .conftest import micro_model

RANT = "I waited three damn weeks. What a load of crap. I am pissed off and this shit is broken."


def test_guard_refuses_unsafe_text_and_passes_clean_text():
    g = Guard()
    r = g.check(RANT, "output")
    assert r is not None and r.stage == "output" and r.reason == "safety:unsafe_words"
    assert r.to_json()["refusal"]["scores"]["unsafe_words"] >= 3
    assert g.check("The cider mill presses apples in autumn.", "input") is None


def test_generate_guard_refuses_an_unsafe_prompt_and_answers_a_clean_one(base_tokenizer, tmp_path, capsys):
    save_tokenizer(base_tokenizer, str(tmp_path / "ckpt"))
    save_model_weights(micro_model(base_tokenizer.get_vocab_size()), str(tmp_path / "ckpt"))
    assert main(["generate", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", RANT, "--guard"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["refusal"]["stage"] == "input" and out["refusal"]["reason"] == "safety:unsafe_words"
    assert main(["generate", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", "The cider", "--guard",
                 "--max-new-tokens", "4"]) == 0
    assert "refusal" not in capsys.readouterr().out
