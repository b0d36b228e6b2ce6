"""Fused Triton kernels, each beside its eager reference; models call ``training.kernels.ops``."""
from training.kernels.ops import (apply_rope, attention, dequantize_kv_int8, get_default_impl,
                                  linear_cross_entropy, moe_mlp, quantize_kv_int8, rms_norm,
                                  rope_cos_sin, set_default_impl, swiglu, use_impl)

__all__ = ["apply_rope", "attention", "dequantize_kv_int8", "get_default_impl",
           "linear_cross_entropy", "moe_mlp", "quantize_kv_int8", "rms_norm", "rope_cos_sin",
           "set_default_impl", "swiglu", "use_impl"]
