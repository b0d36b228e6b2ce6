"""Speculative decoding: greedy output equals the target's own, sampled output follows the
target's distribution, the grammar holds under drafting, and rejected tokens leave no trace in
any KV cache (ring buffers, the on-device model's shared KV, int8)."""
import copy

import pytest
import torch

from gen_helpers import micro_model
from inference.decode import Sampling, Session, decode_plain
from inference.generator import GenerationError, Generator
from inference.speculative import decode_speculative
from training.models.generate import generate

PROMPT = list(range(40, 52))
MICRO = dict(d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, ffn_hidden=64)


def noisy_copy(model, scale: float, seed: int):
    """A draft that agrees with the target often but not always."""
    d = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in d.parameters():
            p.add_(torch.randn(p.shape, generator=g) * scale * p.std().clamp_min(1e-3))
    return d


@pytest.mark.parametrize("arch,int8", [("tiny", False), ("ondevice-tiny", True), ("ptmoe-tiny", True)])
def test_greedy_equals_target_greedy_and_rollback_is_exact(arch, int8):
    over = dict(sliding_window=8, global_every=4) if arch == "ptmoe-tiny" else {}
    target = micro_model(1, arch, init_std=0.3, **over)
    draft = noisy_copy(target, 0.05, 0)
    n = 30  # well past the ptmoe ring buffers of 8 slots
    ref = generate(target, torch.tensor([PROMPT]), n, kv_int8=int8)[0, len(PROMPT):].tolist()
    t_sess = Session(target, 80, int8)
    out, stats = decode_speculative(t_sess, Session(draft, 80, int8), PROMPT, n, Sampling(), None, k=4)
    assert out == ref
    assert 0 < stats.accepted < stats.drafted  # rejections happened, so rollbacks were exercised
    # the target's cache after all the rollbacks holds exactly what a plain run over the same tokens holds
    fresh = Session(target, 80, int8)
    fresh.feed(PROMPT + out[:-1])
    assert t_sess.pos == fresh.pos
    tol = 2e-2 if int8 else 1e-5  # int8: at most a rounding step where float noise crosses a boundary
    for key, layer in fresh.cache.layers.items():
        for a, b in zip(t_sess.cache.layers[key].read(), layer.read()):  # what attention will read
            assert a.shape == b.shape and torch.allclose(a, b, atol=tol * b.abs().max()), key


def test_sampled_tokens_follow_the_target_distribution():
    """Chi-square of the second generated token against the target's exact marginal
    (sum over the first token); the draft's own marginal is far from it, so accepting its
    proposals blindly would fail."""
    target = micro_model(2, init_std=0.5, vocab_size=24, **MICRO)
    draft = micro_model(3, init_std=0.5, vocab_size=24, **MICRO)
    prompt = [5, 9, 2]

    def marginal(model):
        with torch.no_grad():
            p1 = torch.softmax(model(torch.tensor([prompt])).logits[0, -1], -1)
            rows = torch.tensor([prompt + [x] for x in range(24)])
            p2 = torch.softmax(model(rows).logits[:, -1], -1)
        return p1 @ p2

    p_t, p_d = marginal(target), marginal(draft)
    N = 500
    counts = torch.zeros(24)
    for s in range(N):
        out, _ = decode_speculative(Session(target, 16), Session(draft, 16), prompt, 2,
                                    Sampling(temperature=1.0, seed=s), None, k=2)
        counts[out[1]] += 1

    def chi2(p):
        top = p.argsort(descending=True)[:7]
        obs = torch.cat([counts[top], (N - counts[top].sum()).view(1)])
        exp = torch.cat([p[top], (1 - p[top].sum()).view(1)]) * N
        return float(((obs - exp) ** 2 / exp).sum())

    assert chi2(p_t) < 24.3  # df 7, p = 0.001
    assert chi2(p_d) > 24.3


def test_speculative_under_a_grammar_stays_valid_and_greedy_equal(tokenizer):
    from gen_helpers import micro_model as mm
    from test_guided import Item
    target = mm(4, init_std=0.3, max_seq_len=1024)
    draft = noisy_copy(target, 0.05, 1)
    gen = Generator(target, tokenizer, draft=draft, draft_tokenizer=tokenizer)
    spec = gen.respond_output("Item:", Item, speculative=True)
    plain = gen.respond_output("Item:", Item, speculative=False)
    assert isinstance(spec.value, Item) and spec.text == plain.text
    assert spec.stats.drafted > 0
    for s in range(3):
        assert isinstance(gen.respond("Item:", Item, speculative=True, temperature=1.0, seed=s), Item)


def test_draft_with_another_tokenizer_is_refused(tokenizer):
    from training.tokenizer import train_tokenizer
    other = train_tokenizer(["completely different text for another vocabulary " * 3] * 20, 300)
    with pytest.raises(GenerationError, match="another tokenizer"):
        Generator(micro_model(0), tokenizer, draft=micro_model(1), draft_tokenizer=other)


def test_plain_decode_equals_training_generate():
    m = micro_model(5, init_std=0.3)
    out, _ = decode_plain(Session(m, 64), PROMPT, 20, Sampling(), None)
    assert out == generate(m, torch.tensor([PROMPT]), 20)[0, len(PROMPT):].tolist()
