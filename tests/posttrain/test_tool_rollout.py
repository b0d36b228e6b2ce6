"""Tool tasks in RL: a playout feeds the platform's results back as tool turns, is rewarded by task
success, and marks for the loss exactly the tokens SFT would learn (assistant turns, never the
tool results); and evaluation prompts are the training template's prefix, token for token."""
from __future__ import annotations

import json

from pipelines.sft_data.guided import guided_conversations
from pipelines.sft_data.instructions import qa_conversations
from pipelines.sft_data.trajectories import tool_conversations
from training.posttrain.chat import END, encode, prompt_ids, tool_result_text
from training.posttrain.data import prompt_of
from training.posttrain.rl import Prompt, RLConfig, complete
from training.posttrain.sft import SFTConfig, run_sft
from training.posttrain.tool_platform import ToolPlatform
from training.posttrain.tool_rollout import play_tool_task

from .conftest import micro_model

CALL = {"name": "convert_units", "arguments": {"value": 2, "from_unit": "km", "to_unit": "m"}}
TASK = {"type": "tool", "answer": "2000", "tables": None}


def _conversation() -> list[dict]:
    result = ToolPlatform().execute(CALL)
    return [{"role": "user", "content": "Convert 2 km to m."},
            {"role": "assistant", "content": json.dumps({"calls": [CALL]}, separators=(",", ":"))},
            {"role": "tool", "content": tool_result_text([result])},
            {"role": "assistant", "content": '{"answer":"2000"}'}]


def test_tool_playout_learns_only_assistant_turns_and_scores_success(chat_tokenizer, tmp_path):
    tok, _ = chat_tokenizer
    conv = _conversation()
    enc = encode(tok, conv, 256)
    model = micro_model(tok.get_vocab_size(), max_seq_len=256)
    # a real model that has memorised one trajectory: its greedy playout must replay it through the platform
    run_sft(model, [enc], SFTConfig(steps=60, batch=1, seq_len=256, lr=1e-2, checkpoint_every=10 ** 6),
            str(tmp_path / "sft"), pad_id=tok.token_to_id(END))
    prompt = prompt_ids(tok, conv[:1])
    play = play_tool_task(model, tok, prompt, TASK, max_new_tokens=64)
    assert (play.stop, play.reward, play.calls) == ("answer", 1.0, 1)
    assert play.ids == enc.ids                 # the tool turn came from the platform, as in training
    assert play.generated == enc.loss_mask     # the loss covers what SFT learns: assistant turns only
    seqs, gens, rewards, new = complete(model, Prompt(prompt, TASK), 2, RLConfig(temperature=0.0), 0,
                                        tok.token_to_id(END), tok.decode, [], tokenizer=tok)
    assert seqs == [enc.ids] * 2 and gens == [enc.loss_mask] * 2 and rewards == [1.0, 1.0]
    assert new == 2 * sum(enc.loss_mask)
    wrong = play_tool_task(model, tok, prompt, {**TASK, "answer": "2"}, max_new_tokens=64)
    assert wrong.reward == 0.0 and wrong.calls == 1


def test_eval_prompts_are_the_training_template_prefix(chat_tokenizer):
    tok, _ = chat_tokenizer
    rows = [*qa_conversations(0, 2, max_rows=2), *guided_conversations(0, 1, max_rows=2),
            *tool_conversations(0, 1, max_rows=2)]
    assert {json.loads(r["task"])["type"] for r in rows} == {"exact", "schema", "tool"}
    for r in rows:
        row = {"messages": json.loads(r["messages"]), "task": json.loads(r["task"])}
        p = prompt_ids(tok, prompt_of(row))
        assert encode(tok, row["messages"], 10 ** 5).ids[:len(p)] == p
        assert p[-1] == tok.token_to_id("<|assistant|>")
