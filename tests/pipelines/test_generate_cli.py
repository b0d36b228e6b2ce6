"""`cidermill generate` end to end on a saved checkpoint: a typed value, tool calls, one-line errors."""
import dataclasses
import json
import re
import sys
import textwrap

import pytest
import torch

from pipelines.cli import main
from training.checkpoint import save_model_weights
from training.models import build_model, get_preset
from training.tokenizer import save_tokenizer, train_tokenizer

TYPES = textwrap.dedent('''
    import dataclasses, enum
    from typing import Annotated
    from pydantic import Field

    class Mood(enum.Enum):
        happy = "happy"
        sad = "sad"

    @dataclasses.dataclass
    class Reply:
        mood: Mood
        score: Annotated[int, Field(ge=0, le=9)]
        words: list[Annotated[str, Field(max_length=6)]] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass
    class Bad:
        tags: set[str]
''')

TOOLS = textwrap.dedent('''
    import time

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def explode(x: int) -> int:
        """Always fails."""
        raise ValueError("boom")

    def hang(x: int) -> int:
        """Never returns in time."""
        time.sleep(3)
        return x
''')


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("gen")
    tok = train_tokenizer([f"the reply is happy {i} sad words score {i * 7}" for i in range(200)], 400)
    save_tokenizer(tok, str(d / "ckpt"))
    cfg = dataclasses.replace(get_preset("tiny"), vocab_size=400, d_model=32, n_layers=1, n_heads=2,
                              n_kv_heads=1, ffn_hidden=64, max_seq_len=4096, init_std=0.3)
    torch.manual_seed(0)
    save_model_weights(build_model(cfg), str(d / "ckpt"))
    (d / "gen_types.py").write_text(TYPES)
    (d / "gen_tools.py").write_text(TOOLS)
    sys.path.insert(0, str(d))
    yield d
    sys.path.remove(str(d))


def test_schema_prints_a_typed_value(setup, capsys):
    rc = main(["generate", "--checkpoint", str(setup / "ckpt"), "--prompt", "How are you?",
               "--schema", "gen_types:Reply", "--temperature", "1", "--seed", "2"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    value = json.loads(out.out)
    assert value["mood"] in ("happy", "sad") and 0 <= value["score"] <= 9


@pytest.mark.slow
def test_tools_run_and_errors_reach_the_model(setup, capsys):
    rcs = []
    for seed in range(3):
        rcs.append(main(["generate", "--checkpoint", str(setup / "ckpt"), "--prompt", "Add 2 and 3.",
                         "--tools", "gen_tools", "--schema", "gen_types:Reply", "--temperature", "1",
                         "--seed", str(seed), "--tool-timeout", "0.5", "--max-new-tokens", "600", "--stats"]))
    out = capsys.readouterr()
    assert rcs == [0] * 3, out.err
    assert "Traceback" not in out.err
    assert "tool turn 1:" in out.err  # some seed called tools; their results (or errors) went back
    assert out.err.count("tokens/s") == 3  # --stats covers tool runs too, one line per request
    assert re.search(r"over [2-9] model turns", out.err)  # a run that called tools counts every turn
    for line in out.out.strip().splitlines():
        assert json.loads(line)["mood"] in ("happy", "sad")


@pytest.mark.parametrize("argv,message", [
    (["--schema", "gen_types:Bad"], "uniqueItems"),
    (["--schema", "gen_types:Nope"], "has no 'Nope'"),
    (["--prompt", "word " * 9000], "longer than the context"),
    (["--draft", "{ckpt}", "--draft-tokenizer", "{other}"], "another tokenizer"),
])
def test_bad_input_is_one_line(setup, capsys, argv, message):
    other = setup / "other"
    if not other.exists():
        save_tokenizer(train_tokenizer(["a different vocabulary entirely " * 4] * 30, 300), str(other))
    argv = [a.format(ckpt=setup / "ckpt", other=other) for a in argv]
    base = ["generate", "--checkpoint", str(setup / "ckpt")] + ([] if "--prompt" in argv else ["--prompt", "hi"])
    rc = main(base + argv)
    err = capsys.readouterr().err
    assert rc == 1 and message in err and len(err.strip().splitlines()) == 1, err
