"""`cidermill model info --checkpoint X`: measured size of a checkpoint directory or packed file.

Bits per weight per tensor kind (decoder Linears, embedding, other) come from the bytes each
tensor takes in the file; KV bytes per token from the model config (bf16 and int8 caches).
"""
from __future__ import annotations

import json
import os

from corpus.errors import CidermillError


def checkpoint_info(path: str) -> dict:
    from training.models import config_from_dict
    from training.models.info import kv_bytes
    from training.quant import packed

    if os.path.isfile(path):
        rep = packed.size_report(path)
        cfg = config_from_dict(packed.read_header(path)["config"])
        fmt = "packed"
    elif os.path.isdir(path):
        from training.checkpoint import MODEL_FILE, read_model_config
        cfg = config_from_dict(read_model_config(path))
        file = os.path.join(path, MODEL_FILE)
        if not os.path.exists(file):
            raise CidermillError(f"{path}: no {MODEL_FILE} in this checkpoint directory")
        rep = packed.checkpoint_size_report(file)
        fmt = "safetensors"
    else:
        raise CidermillError(f"{path}: no such checkpoint (a checkpoint directory or a packed file)")
    return {"path": path, "format": fmt, "preset": cfg.name, **rep,
            "kv_bytes_per_token": {"bf16": kv_bytes(cfg)["per_token"], "int8": kv_bytes(cfg, int8=True)["per_token"]}}


def print_checkpoint_info(path: str, as_json: bool = False) -> int:
    info = checkpoint_info(path)
    if as_json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"checkpoint    {path}  ({info['format']}, preset {info['preset']})")
    print(f"file size     {info['file_bytes']:,} B for {info['weights']:,} weights: "
          f"{info['bits_per_weight']:.3f} bits/weight overall")
    for kind, k in sorted(info["kinds"].items()):
        print(f"  {kind:<10}  {k['weights']:>12,} weights  {k['bytes']:>12,} B  {k['bits_per_weight']:7.3f} bits/weight")
    kv = info["kv_bytes_per_token"]
    print(f"KV cache      {kv['bf16']:,} B/token bf16, {kv['int8']:,} B/token int8")
    return 0
