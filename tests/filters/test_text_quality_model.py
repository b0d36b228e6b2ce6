"""The fastText quality model: `cidermill train-quality`, the shipped default model, top-p% percentile."""
import os
import subprocess
import sys

from filters import percentile
from filters.base import Doc
from datatools.boilerplate_gen import negatives
from filters.langid import load_fasttext
from filters.quality_model import DEFAULT_MODEL, QualityModel, hq_probability, read_texts
from text_samples import DE, EN, EN2, ES, FR, SPAM

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_train_quality_command_learns_prose_vs_boilerplate(tmp_path):
    sentences = [s.strip() for t in (EN, EN2, FR, DE, ES) for s in t.split(". ") if s.strip()]
    pos = ["\f".join(". ".join(sentences[i:i + 3]) for i in range(len(sentences) - 2))]
    (tmp_path / "pos.txt").write_text(pos[0], encoding="utf-8")
    neg = negatives(60, seed=3, salad_source=[EN, FR])
    (tmp_path / "neg.txt").write_text("\f".join(neg), encoding="utf-8")
    assert len(read_texts(str(tmp_path / "pos.txt"))) == len(sentences) - 2
    out = tmp_path / "q.bin"
    # a fresh process, as users run it (fastText training here is sensitive to earlier models in-process)
    cmd = [sys.executable, "-m", "pipelines.cli", "train-quality", "--positive", str(tmp_path / "pos.txt"),
           "--negative", str(tmp_path / "neg.txt"), "--out", str(out), "--bucket", "5000", "--dim", "32",
           "--epoch", "25", "--lr", "0.5", "--min-count", "1"]
    rc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).returncode
    assert rc == 0 and out.exists() and out.stat().st_size < 2_000_000
    m = load_fasttext(str(out))
    held_out_pos = "The family still runs the cider mill, and visitors learn how the fruit is pressed by hand."
    held_out_neg = negatives(5, seed=99)[2]  # a spam kind, different seed from training
    assert hq_probability(m, held_out_pos) > hq_probability(m, held_out_neg) + 0.3


def test_default_model_is_small_and_separates():
    assert os.path.getsize(DEFAULT_MODEL) < 5_000_000
    q = QualityModel()
    good = q.score(Doc(id="g", text=EN))["quality_score"]
    bad = q.score(Doc(id="b", text=SPAM))["quality_score"]
    assert good > 0.5 > bad
    assert q.decide({"quality_score": bad})[1] == "quality:low_score"
    assert q.decide({"quality_score": 0.4}, threshold=0.3) == (True, None)
    assert os.path.exists(os.path.splitext(DEFAULT_MODEL)[0] + ".eval.json")  # held-out precision/recall


def test_top_percent_threshold_keeps_at_least_p_percent():
    scores = [i / 100 for i in range(100)]  # 0.00 .. 0.99
    counts = percentile.empty()
    for s in scores:
        percentile.add(counts, s)
    t = percentile.top_percent_threshold(counts, 10)
    assert sum(s >= t for s in scores) == 10
    halves = [percentile.empty(), percentile.empty()]
    for i, s in enumerate(scores):
        percentile.add(halves[i % 2], s)
    assert percentile.top_percent_threshold(percentile.merge(halves), 10) == t  # merge-order independent
    assert percentile.top_percent_threshold(percentile.empty(), 10) == 0.0
