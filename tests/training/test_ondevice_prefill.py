"""On-device prefill that runs block 2 only at the last prompt position: the same cache, logits and
generated tokens as a full prefill, with block 2 run on one position."""
import dataclasses

import torch

from training.models import build_model, get_preset
from training.models.generate import generate


def _model():
    torch.manual_seed(0)
    cfg = dataclasses.replace(get_preset("ondevice-tiny"), vocab_size=512, max_seq_len=128)
    return build_model(cfg).eval()


def test_block2_skipping_prefill_equals_full_prefill():
    model = _model()
    ids = torch.randint(0, 512, (2, 57), generator=torch.Generator().manual_seed(1))
    fast, full = model.allocate_kv_cache(2, 80), model.allocate_kv_cache(2, 80)
    seen = []
    hooks = [layer.register_forward_hook(lambda m, a, o: seen.append(a[0].shape[1]))
             for layer in model.layers[model.config.block1_layers:]]
    a = model.prefill(ids, fast)
    assert seen == [1, 1, 1]                     # block 2 ran on the last position only
    for h in hooks:
        h.remove()
    b = model.full_prefill(ids, full)
    with torch.no_grad():
        c = model(ids).logits[:, -1]
    assert torch.allclose(a, b, atol=1e-5) and torch.allclose(a, c, atol=1e-5)
    assert fast.pos == full.pos == 57
    for name in fast.layers:                    # the same cache: decoding continues identically
        for x, y in zip(fast.layers[name].tensors(), full.layers[name].tensors()):
            assert torch.equal(x, y)
    nxt = a.argmax(-1)[:, None]
    with torch.no_grad():
        assert torch.allclose(model(nxt, cache=fast).logits, model(nxt, cache=full).logits, atol=1e-5)


def test_generation_with_fast_prefill_matches_the_uncached_reference():
    model = _model()
    prompt = torch.randint(0, 512, (2, 40), generator=torch.Generator().manual_seed(2))
    fast = generate(model, prompt, 12)
    slow = generate(model, prompt, 12, use_cache=False)
    assert torch.equal(fast, slow)
