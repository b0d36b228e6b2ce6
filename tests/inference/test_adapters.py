"""LoRA adapters at inference: peft format + base fingerprint, loaded onto a base, switched per request."""
import copy

import pytest
import torch

from gen_helpers import micro_model
from inference.adapters import AdapterError
from training.quant.lora import save_adapter
from inference.generator import Generator
from training.models.fingerprint import base_fingerprint


def make_adapter(base, out_dir, seed):
    from peft import LoraConfig, inject_adapter_in_model
    tuned = copy.deepcopy(base)
    inject_adapter_in_model(LoraConfig(r=4, lora_alpha=8, target_modules=["wq", "wv", "w_up"]), tuned, "a")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in tuned.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    save_adapter(tuned, str(out_dir), adapter_name="a", base=base_fingerprint(base))
    return tuned


def test_adapter_loads_switches_per_request_and_other_base_is_refused(tokenizer, tmp_path):
    base = micro_model(0, init_std=0.3)
    tuned = make_adapter(base, tmp_path / "a1", 1)
    make_adapter(base, tmp_path / "a2", 2)
    ref = copy.deepcopy(base)
    gen = Generator(base, tokenizer)
    assert gen.load_adapter(str(tmp_path / "a1")) == "a1"
    gen.load_adapter(str(tmp_path / "a2"))
    x = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        with gen.adapters.active("a1"):
            assert torch.allclose(base(x).logits, tuned(x).logits, atol=1e-5)
        assert torch.allclose(base(x).logits, ref(x).logits, atol=1e-6)  # off again after the request
    plain = gen.text("the model", max_new_tokens=12)
    a1 = gen.text("the model", max_new_tokens=12, adapter="a1")
    a2 = gen.text("the model", max_new_tokens=12, adapter="a2")
    assert gen.text("the model", max_new_tokens=12) == plain
    assert len({plain, a1, a2}) == 3
    other = Generator(micro_model(9, init_std=0.3), tokenizer)
    with pytest.raises(AdapterError, match="another base"):
        other.load_adapter(str(tmp_path / "a1"))


def test_recovery_adapter_from_compress_loads_at_inference(tokenizer, tmp_path):
    """An adapter written by training/quant (`cidermill compress lora`) is one the generator loads:
    one format and one base fingerprint for both packages."""
    from training.quant import lora as quant_lora
    base = micro_model(0, init_std=0.3)
    tuned = quant_lora.add_lora(copy.deepcopy(base), rank=4, alpha=8)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in tuned.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    quant_lora.save_adapter(tuned, str(tmp_path / "rec"))
    gen = Generator(base, tokenizer)
    name = gen.load_adapter(str(tmp_path / "rec"))
    x = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad(), gen.adapters.active(name):
        assert torch.allclose(base(x).logits, tuned(x).logits, atol=1e-5)
