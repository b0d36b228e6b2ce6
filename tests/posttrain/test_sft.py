"""SFT: a resumed run equals the uninterrupted one, a NaN step is skipped and recorded, and the
data builders record why they dropped what they dropped."""
from __future__ import annotations

import json

import torch

from corpus.reader import open_dataset
from corpus.report import read_report
from pipelines.sft_data.instructions import document_conversations, qa_conversations
from pipelines.sft_data.trajectories import corrected_path, preference_pairs, trajectory_tree
from pipelines.sft_data.write import write_conversations
from training.posttrain.chat import encode
from training.posttrain.sft import SFTConfig, run_sft

from .conftest import micro_model

CONVS = [[{"role": "user", "content": f"Question {i}?"}, {"role": "assistant", "content": f"Answer {i}."}]
         for i in range(3)] + [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"},
                                {"role": "assistant", "content": "Hi."}]]


def _model(tok):
    m = micro_model(tok.get_vocab_size(), tie_embeddings=False)
    # the system marker's embedding is NaN: every batch holding the system conversation has a NaN loss
    with torch.no_grad():
        m.tok_embeddings.weight[tok.token_to_id("<|system|>")] = float("nan")
    return m


def test_resume_is_exact_and_nan_steps_are_skipped(chat_tokenizer, tmp_path):
    tok, _ = chat_tokenizer
    enc = [encode(tok, c, 64) for c in CONVS]
    cfg = SFTConfig(steps=6, batch=2, seq_len=64, lr=1e-2, checkpoint_every=2, seed=3)
    straight = _model(tok)
    out = run_sft(straight, enc, cfg, str(tmp_path / "a"), pad_id=0)
    assert len(out["nan_steps"]) == 3  # the system conversation is in one of the two batches per epoch
    interrupted = _model(tok)
    run_sft(interrupted, enc, cfg, str(tmp_path / "b"), pad_id=0, stop_after=4)
    resumed = _model(tok)
    out_b = run_sft(resumed, enc, cfg, str(tmp_path / "b"), pad_id=0)
    assert out_b == out
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True, msg=k)
    finite = [p for n, p in straight.named_parameters() if n != "tok_embeddings.weight"]
    assert all(torch.isfinite(p).all() for p in finite)
    log = [json.loads(x) for x in open(tmp_path / "b" / "posttrain_log.jsonl")]
    assert [r["step"] for r in log] == list(range(6))
    assert [r["step"] for r in log if r["skipped"]] == out["nan_steps"]


def test_builders_write_shards_with_drop_reasons(chat_tokenizer, tmp_path):
    tok, _ = chat_tokenizer
    rows = list(qa_conversations(0, 4))
    rows += list(document_conversations([{"id": "d1", "text": "Le moulin a ouvert en 1921. Il presse 40 tonnes.",
                                          "language": "fr"},
                                         {"id": "d2", "text": "Mlyn otevřel v roce 1921.", "language": "cs"}]))
    rows.append({**rows[0], "id": "bad-role", "messages": json.dumps([{"role": "bot", "content": "x"}])})
    rows.append({**rows[0], "id": "no-assistant", "messages": json.dumps([{"role": "user", "content": "x"}])})
    stats = write_conversations(rows, str(tmp_path / "sft"), tok, 512, "sft_data")
    st = stats.stages["sft_data"]
    assert st.dropped == {"language_without_template": 3, "unknown_role": 1, "no_assistant_turn": 1}
    ds = open_dataset(str(tmp_path / "sft"))
    assert len(ds) == st.kept == len(rows) - 5
    assert read_report(str(tmp_path / "sft")).stages["sft_data"].kept == st.kept
    fr = [r for r in ds.to_table().to_pylist() if r["id"] == "doc-summarise-d1"][0]
    assert json.loads(fr["messages"])[0]["content"].endswith("Résume le texte en une phrase.")
    assert json.loads(fr["messages"])[1]["content"] == "Le moulin a ouvert en 1921."


def test_trajectory_tree_keeps_both_branches():
    tree = trajectory_tree(0, 20_001, error_rate=1.0)
    rejected = [n for n in tree["nodes"] if n["rejected"]]
    assert rejected and len(preference_pairs(tree)) == len(rejected)
    path = corrected_path(tree)
    assert json.loads(path[-1]["content"]) == {"answer": tree["answer"]}
    assert not any(n["assistant"] == m["content"] for n in rejected for m in path)
    for p in preference_pairs(tree):
        assert p["chosen"] != p["rejected"]


def test_mixed_language_option_asks_in_another_language_for_the_documents():
    from pipelines.sft_data.instructions import ANSWER_IN, DOC_PROMPTS, LANGUAGE_NAMES
    docs = [{"id": f"d{i}", "text": "Le moulin a ouvert en 1921. Il presse 40 tonnes.", "language": "fr"}
            for i in range(20)]
    plain = list(document_conversations(docs))
    assert all(r["language"] == "fr" for r in plain)
    mixed = list(document_conversations(docs, mixed=0.5))
    asked = [r for r in mixed if ">" in r["language"]]
    assert 0 < len(asked) < len(mixed)
    assert list(document_conversations(docs, mixed=0.5)) == mixed  # seeded by the document id
    for r in asked:
        ask, answer_lang = r["language"].split(">")
        user, answer = (m["content"] for m in json.loads(r["messages"]))
        task = r["kind"].removeprefix("doc_")
        assert ask != "fr" and answer_lang == "fr"
        assert user.endswith(DOC_PROMPTS[task][ask] + " " + ANSWER_IN[ask].format(LANGUAGE_NAMES[ask]["fr"]))
        assert answer == json.loads(next(p for p in plain if p["id"] == r["id"])["messages"])[1]["content"]
