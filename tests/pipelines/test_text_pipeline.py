"""`cidermill text` end to end on the demo site's labelled pages plus bad input, single- and
multi-process (same output), checking where every row goes and what the report says."""
import hashlib
import json
import os

import pyarrow as pa
import pyarrow.dataset as pads
import pytest
import yaml

from corpus.reader import ShardDataset
from corpus.report import read_report, read_samples
from corpus.schemas import PAGES
from corpus.writer import write_dataset
from pipelines.cli import main
from pipelines.text_job import run_text

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GT = os.path.join(ROOT, "pipelines", "demo_site", "ground_truth.json")


def page_id(path):
    return hashlib.sha1(path.encode()).hexdigest()


def build_pages(tmp_path):
    with open(GT, encoding="utf-8") as f:
        gt = json.load(f)
    rows, labels = [], {}
    for path, e in sorted(gt["paths"].items()):
        if e.get("kind") != "html" or not e.get("main_text"):
            continue
        rows.append({"id": page_id(path), "url": "http://demo.test" + path, "text": e["main_text"],
                     "title": e.get("title"), "training_allowed": True, "robots_noindex": False})
        labels[page_id(path)] = e
    good = rows[[labels[r["id"]].get("quality") for r in rows].index("good")]["text"]
    rows += [
        {"id": "opt-out", "url": "http://demo.test/no-train", "text": good, "training_allowed": False},
        {"id": "noindex", "url": "http://demo.test/noindex", "text": good, "robots_noindex": True},
        {"id": "binary", "url": "http://demo.test/bin", "text": "".join(chr(i % 32) for i in range(3000))},
        {"id": "empty", "url": "http://demo.test/empty", "text": ""},
        {"id": None, "url": None, "text": None},
        {"id": "huge", "url": "http://demo.test/huge", "text": "\n\n".join([good] * 2000)},
    ]
    table = pa.Table.from_pylist(rows, schema=PAGES)
    # one row whose text is invalid UTF-8 (a broken writer upstream): Arrow string without validation
    bad = pa.array([b"\xff\xfe\x00\xc3\x28" * 50], pa.binary()).view(pa.string())
    extra = pa.Table.from_pylist([{"id": "bad-utf8", "url": "http://demo.test/bad"}], schema=PAGES)
    extra = extra.set_column(extra.schema.get_field_index("text"), "text", bad)
    write_dataset(str(tmp_path / "pages"), "pages", pa.concat_tables([table, extra]))
    evals = tmp_path / "eval.jsonl"
    evals.write_text("".join(json.dumps(p) + "\n" for p in gt["eval_passages"]))
    cfg = tmp_path / "text.yaml"
    cfg.write_text(yaml.safe_dump({"input": {"max_chars": 200_000},
                                   "quality": {"top_percent": 90},
                                   "decontam": {"eval_sets": [str(evals)]},
                                   "dedup": {"max_rounds": 2}}))  # fewer Beam stages; union-find finishes
    return str(tmp_path / "pages"), str(cfg), labels


def read_sorted(directory):
    t = ShardDataset(directory).to_table()
    return t.sort_by("id").to_pylist()


@pytest.mark.slow
def test_text_pipeline_single_and_multi_process(tmp_path):
    pages, cfg, labels = build_pages(tmp_path)
    out = str(tmp_path / "docs")
    summary = run_text(pages, out, cfg)
    kept, rejected = read_sorted(out), read_sorted(out + ".rejected")
    n_in = len(ShardDataset(pages))
    assert summary["rows_in"] == n_in == len(kept) + len(rejected)
    assert summary["kept"] == len(kept) > 20

    # OUT holds kept rows only, readable as a plain Arrow dataset; every score on every scored row
    assert pads.dataset(out, format="ipc").count_rows() == len(kept)
    assert all(r["drop_reason"] is None for r in kept) and all(r["drop_reason"] for r in rejected)
    for r in kept:
        assert r["quality_score"] is not None and r["gopher_words"] is not None and r["language"]
        assert r["dedup_cluster"] and r["dedup_cluster_size"] >= 1
    reasons = {r["id"]: r["drop_reason"] for r in rejected}
    assert reasons["opt-out"] == "opt_out:training_not_allowed" and reasons["noindex"] == "opt_out:noindex"
    assert {r["id"]: r["text"] for r in rejected}["opt-out"] is None      # opted-out text kept nowhere
    assert reasons["binary"] == "bad_input:binary" and reasons["empty"] == "bad_input:empty"
    assert reasons["bad-utf8"] in ("bad_input:invalid_utf8", "bad_input:binary")
    assert any(k.startswith("noid-") and v == "bad_input:missing_fields" for k, v in reasons.items())
    huge = [r for r in kept + rejected if r["id"] == "huge"][0]
    assert huge["truncated"] and len(huge["text"]) <= 200_000

    # labelled pages: low-quality never kept; contamination, exact and near duplicates dropped
    kept_ids = {r["id"] for r in kept}
    for pid, e in labels.items():
        if e["quality"] in ("low", "none", "navigation"):
            assert pid not in kept_ids, (e["categories"], reasons.get(pid))
    assert reasons[page_id("/blog/pub-quiz.html")] == "decontam:eval_ngram_overlap"
    glossary = sorted([page_id("/en/cider-glossary.html"), page_id("/mirror/cider-glossary.html")])
    assert glossary[0] in kept_ids and reasons[glossary[1]] == "dedup:exact_duplicate"
    assert any(v == "dedup:near_duplicate" for v in reasons.values())
    assert any(v.startswith("quality:below_top_percent") for v in reasons.values())
    good = [pid for pid, e in labels.items() if e["quality"] == "good"]
    lost = [pid for pid in good if pid not in kept_ids and not reasons[pid].startswith(("dedup:", "decontam:"))]
    assert len(lost) <= 0.25 * len(good), [reasons[p] for p in lost]

    # report: funnel in stage order, reasons, histograms, PII counters, dead-letter samples
    stats = read_report(out)
    assert list(stats.stages) == ["input", "c4_lines", "pii", "langid", "gopher", "repetition", "safety",
                                  "quality", "decontam", "dedup"]
    assert stats.stages["input"].rows_in == n_in
    assert stats.stages["dedup"].kept == len(kept)
    assert sum(sum(s.dropped.values()) for s in stats.stages.values()) == len(rejected)
    assert stats.stages["pii"].counters["email"] >= 3 and stats.stages["pii"].counters["ip"] >= 3
    assert sum(stats.stages["quality"].histograms["quality_score"].counts) == stats.stages["quality"].rows_in
    samples = read_samples(out)
    assert "bad_input_binary" in samples and "opt_out_training_not_allowed" in samples

    # the same job with two worker processes: identical datasets and report
    out2 = str(tmp_path / "docs2")
    rc = main(["text", "--in", pages, "--out", out2, "--config", cfg,
               "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert rc == 0
    assert not os.path.exists(os.path.join(out2, ".staging"))  # the rows dedup staged are gone with the job
    assert read_sorted(out2) == kept and read_sorted(out2 + ".rejected") == rejected
    assert read_report(out2).to_json()["stages"] == stats.to_json()["stages"]
    assert read_samples(out2) == samples


def test_text_cli_errors_are_one_line(tmp_path, capsys):
    pages, _, _ = build_pages(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("gopher: {min_wrds: 3}\n")
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--config", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown option(s) min_wrds" in err[0]
    assert main(["text", "--in", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 1


def test_decontamination_spares_ngrams_common_in_the_corpus(tmp_path):
    """Corpus-wide counts decide: an eval 13-gram found in >= max_corpus_count documents is a
    common phrase and drops nothing; one found in fewer documents drops every document with it."""
    import random

    rng = random.Random(7)
    words = lambda n: " ".join(f"w{rng.randrange(10**6)}" for _ in range(n))  # noqa: E731
    common = "the quick brown fox jumps over the lazy dog near the quiet river bank"  # 14 words
    rare = "seven hundred purple elephants marched slowly across the frozen northern lake at dawn"
    texts = {
        "c1": f"{words(30)} {common} {words(30)}",  # the common phrase: in exactly 3 documents
        "c2": f"{words(20)} {common}. {words(40)}",
        "both": f"{words(25)} {common} {words(10)} {rare} {words(10)}",  # common + rare: dropped
        "r1": f"{words(40)} {rare} {words(5)}",  # the rare phrase: in 2 documents (< 3)
        "clean": words(80),
        "short": "the quick brown fox",  # fewer words than an n-gram
    }
    rows = [{"id": k, "url": f"http://x.test/{k}", "text": t, "training_allowed": True} for k, t in texts.items()]
    write_dataset(str(tmp_path / "pages"), "pages", pa.Table.from_pylist(rows, schema=PAGES))
    evals = tmp_path / "eval.jsonl"
    evals.write_text(json.dumps({"question": f"Q: {common}?", "answer": rare}) + "\n")

    def run(max_count, name):
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(yaml.safe_dump({"stages": ["input", "decontam"],
                                       "decontam": {"eval_sets": [str(evals)], "max_corpus_count": max_count}}))
        out = str(tmp_path / name)
        run_text(str(tmp_path / "pages"), out, str(cfg))
        kept = {r["id"]: r for r in read_sorted(out)}
        rejected = {r["id"]: r for r in read_sorted(out + ".rejected")}
        assert set(kept) | set(rejected) == set(texts) and not set(kept) & set(rejected)
        return kept, rejected

    kept, rejected = run(3, "t3")
    assert set(kept) == {"c1", "c2", "clean", "short"}
    assert {k: r["drop_reason"] for k, r in rejected.items()} == {
        "both": "decontam:eval_ngram_overlap", "r1": "decontam:eval_ngram_overlap"}
    assert kept["c1"]["decontam_hits"] == 2 and kept["clean"]["decontam_hits"] == 0  # 14 words: two 13-grams
    assert all("_decontam_ngrams" not in r for r in [*kept.values(), *rejected.values()])
    stats = read_report(str(tmp_path / "t3"))
    assert stats.stages["decontam"].dropped == {"decontam:eval_ngram_overlap": 2}

    # one more than the common phrase's count: now it is rare too and its documents go
    kept, rejected = run(4, "t4")
    assert set(kept) == {"clean", "short"} and set(rejected) == {"c1", "c2", "both", "r1"}
