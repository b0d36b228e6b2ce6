"""The chat template round-trips, the loss falls only on assistant tokens, packed conversations
do not see each other, and bad conversations get their drop reason."""
from __future__ import annotations

import pytest
import torch

from inference.prompting import with_tool_results
from training.posttrain.chat import (END, ChatFormatError, encode, parse, prepare_chat_model, render,
                                     tool_result_text)
from training.posttrain.packing import IGNORE, pack

from .conftest import micro_model

CONV = [{"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 2+3? Use the tool."},
        {"role": "assistant", "content": '{"calls":[{"name":"add","arguments":{"a":2,"b":3}}]}'},
        {"role": "tool", "content": tool_result_text([{"name": "add", "result": 5}])},
        {"role": "assistant", "content": '{"answer":"5"}'}]
OTHER = [{"role": "user", "content": "Quelle est la capitale?"},
         {"role": "assistant", "content": "Oslo."}]


def test_render_parse_round_trip(chat_tokenizer):
    tok, _ = chat_tokenizer
    for conv in (CONV, OTHER, [{"role": "user", "content": ""}, {"role": "assistant", "content": "x"}]):
        text = render(conv)
        assert parse(text) == conv
        enc = encode(tok, conv, 128)
        assert tok.decode(enc.ids, skip_special_tokens=False) == text
    # markers are single special tokens, never split
    for t in ("<|user|>", "<|assistant|>", "<|tool|>", "<|system|>", END):
        assert len(tok.encode(t, add_special_tokens=False).ids) == 1


def test_tool_turn_matches_the_inference_format():
    results = [{"name": "add", "result": 5}, {"name": "kv_get", "error": "KeyError: 'x'"}]
    assert with_tool_results("T", "C", results) == f"TC\nTool results:\n{tool_result_text(results)}\nJSON: "


def test_loss_only_on_assistant_tokens(chat_tokenizer):
    tok, _ = chat_tokenizer
    batch = pack([encode(tok, CONV, 128), encode(tok, OTHER, 128)], 128, pad_id=0)
    kept = batch.targets[batch.targets != IGNORE].tolist()
    assistant = "".join(m["content"] + END for m in CONV + OTHER if m["role"] == "assistant")
    assert tok.decode(kept, skip_special_tokens=False) == assistant
    # and the gradient of the loss reaches the output only through assistant targets: changing a
    # user token in the targets' place changes nothing, changing an assistant one does
    model = micro_model(tok.get_vocab_size())
    base = model(batch.input_ids, targets=batch.targets, doc_ids=batch.doc_ids).loss
    t2 = batch.targets.clone()
    pos = (t2 != IGNORE).nonzero()[0]
    t2[pos[0], pos[1]] = (t2[pos[0], pos[1]] + 1) % tok.get_vocab_size()
    assert model(batch.input_ids, targets=t2, doc_ids=batch.doc_ids).loss != base


def test_packed_conversations_do_not_attend_across(chat_tokenizer):
    tok, _ = chat_tokenizer
    a, b = encode(tok, CONV, 128), encode(tok, OTHER, 128)
    model = micro_model(tok.get_vocab_size()).eval()
    batch = pack([a, b], 128, pad_id=0)
    assert batch.input_ids.shape[0] == 1 and set(batch.doc_ids[0].tolist()) == {0, 1, 2}
    with torch.no_grad():
        packed = model(batch.input_ids, doc_ids=batch.doc_ids).logits[0]
        alone = model(torch.tensor([b.ids[:-1]])).logits[0]
    n = len(a.ids) - 1
    torch.testing.assert_close(packed[n:n + len(b.ids) - 1], alone, rtol=1e-4, atol=1e-5)
    # scrambling the first conversation leaves the second one's logits as they were
    scrambled = batch.input_ids.clone()
    scrambled[0, 1:n] = scrambled[0, 1:n].flip(0)
    with torch.no_grad():
        again = model(scrambled, doc_ids=batch.doc_ids).logits[0]
    torch.testing.assert_close(again[n:], packed[n:], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("conv,reason", [
    ([{"role": "user", "content": "hi"}], "no_assistant_turn"),
    ([{"role": "robot", "content": "hi"}, {"role": "assistant", "content": "x"}], "unknown_role"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "5"}, {"role": "assistant", "content": "x"}],
     "tool_result_without_call"),
    ([{"role": "user", "content": "word " * 200}, {"role": "assistant", "content": "x"}], "prompt_too_long"),
])
def test_bad_conversations_get_a_reason(chat_tokenizer, conv, reason):
    tok, _ = chat_tokenizer
    with pytest.raises(ChatFormatError) as e:
        encode(tok, conv, 128)
    assert e.value.reason == reason


def test_long_tool_result_is_truncated_with_a_marker(chat_tokenizer):
    tok, _ = chat_tokenizer
    conv = CONV[:3] + [{"role": "tool", "content": tool_result_text([{"name": "add", "result": "9" * 500}])},
                       CONV[4]]
    enc = encode(tok, conv, 128)
    assert enc.notes == ["tool_result_truncated"] and len(enc.ids) <= 128
    assert "[truncated]" in tok.decode(enc.ids, skip_special_tokens=False)


def test_chat_markers_grow_the_model_through_vocab_extension(base_tokenizer, chat_tokenizer):
    tok, new = chat_tokenizer
    model = micro_model(base_tokenizer.get_vocab_size())
    old = model.tok_embeddings.weight.detach().clone()
    prepare_chat_model(model, base_tokenizer, tok, new)
    W = model.tok_embeddings.weight
    assert W.shape[0] == tok.get_vocab_size() and torch.equal(W[:old.shape[0]], old)
    pieces = base_tokenizer.encode("<|user|>").ids
    torch.testing.assert_close(W[tok.token_to_id("<|user|>")], old[pieces].mean(0))
