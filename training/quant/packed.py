"""The packed model file: 2-bit codes four to a byte, 4-bit codes two to a byte, fp16 steps.

One safetensors file. For a quantised weight ``W [out, in]`` it holds ``W.codes`` (uint8
``[out, in * bits / 8]``; code j of a byte sits at bits ``j*bits .. j*bits+bits-1``, the first
weight in the lowest bits) and ``W.scale`` (fp16 ``[out, in / group]``, the grid step); every
other tensor (norms) is stored as it is. The safetensors metadata key ``cidermill_packed`` holds
the header::

    {"format": "cidermill.packed/1", "config": <model config>, "quant": <QuantConfig or null>,
     "tensors": {"layers.0.attn.wq.weight": {"kind": "linear", "bits": 2, "group": 128,
                                              "shape": [128, 128]}, ...}}

Loading checks the header against the tensors (names, dtypes, shapes, bit widths, group sizes) and
against the model the config builds; any disagreement is refused with one line naming the tensor.
Loading dequantises into a plain float model with ``QuantizedWeight.dequantize``: the same
arithmetic as fake quantisation, so the logits equal the QAT model's exactly.

``size_report(path)`` measures bits per weight per tensor kind from the bytes each tensor takes in
the file (the header's bytes are counted in the total).
"""
from __future__ import annotations

import json
import os
import struct

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from corpus.errors import CidermillError
from training.models import build_model, config_from_dict
from training.quant.fake_quant import kind_of
from training.quant.grid import QuantizedWeight
from training.quant.packed_linear import PackedLinear2

FORMAT = "cidermill.packed/1"
META_KEY = "cidermill_packed"


def pack(codes: torch.Tensor, bits: int) -> torch.Tensor:
    """uint8 codes ``[out, in]`` (each < 2**bits) -> ``[out, in * bits // 8]``."""
    per = 8 // bits
    if codes.shape[-1] % per:
        raise ValueError(f"{codes.shape[-1]} codes per row do not fill whole bytes at {bits} bits")
    c = codes.to(torch.int32).reshape(*codes.shape[:-1], -1, per)
    shifts = torch.arange(per, dtype=torch.int32) * bits
    return (c << shifts).sum(-1).to(torch.uint8)


def unpack(packed: torch.Tensor, bits: int) -> torch.Tensor:
    per = 8 // bits
    shifts = torch.arange(per, dtype=torch.int32) * bits
    c = (packed.to(torch.int32)[..., None] >> shifts) & (2 ** bits - 1)
    return c.reshape(*packed.shape[:-1], -1).to(torch.uint8)


def save_packed(path: str, config: dict, qweights: dict[str, QuantizedWeight],
                float_tensors: dict[str, torch.Tensor], quant: dict | None = None,
                float_dtype: torch.dtype | None = None) -> str:
    """Write the packed file atomically. ``float_tensors``: every non-quantised tensor to keep,
    cast to ``float_dtype`` if given (e.g. bf16 for a float embedding; the default keeps their
    dtype, which keeps the round trip exact)."""
    tensors, header = {}, {}
    for name, q in qweights.items():
        tensors[f"{name}.codes"] = pack(q.codes, q.bits)
        tensors[f"{name}.scale"] = q.step.half().contiguous()
        header[name] = {"kind": kind_of(name), "bits": q.bits, "group": q.group, "shape": list(q.codes.shape)}
    for name, t in float_tensors.items():
        if name in qweights:
            continue
        t = t.detach().to(float_dtype or t.dtype).contiguous()
        tensors[name] = t
        header[name] = {"kind": kind_of(name), "bits": 8 * t.element_size(), "shape": list(t.shape),
                        "dtype": str(t.dtype).removeprefix("torch.")}
    meta = {"format": FORMAT, "config": config, "quant": quant, "tensors": header}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata={META_KEY: json.dumps(meta)})
    os.replace(tmp, path)
    return path


def read_header(path: str) -> dict:
    try:
        with safe_open(path, framework="pt") as f:
            meta = f.metadata() or {}
    except Exception as e:  # noqa: BLE001  safetensors raises its own error types
        raise CidermillError(f"{path}: not a safetensors file ({str(e).splitlines()[0]})") from None
    if META_KEY not in meta:
        raise CidermillError(f"{path}: not a cidermill packed model (no {META_KEY} header)")
    header = json.loads(meta[META_KEY])
    if header.get("format") != FORMAT:
        raise CidermillError(f"{path}: unknown packed format {header.get('format')!r} (want {FORMAT})")
    return header


def _check(path: str, name: str, t: torch.Tensor, dtype: torch.dtype, shape: list[int]) -> None:
    if t.dtype != dtype or list(t.shape) != list(shape):
        raise CidermillError(f"{path}: tensor {name} is {t.dtype} {list(t.shape)} but the header "
                             f"says {dtype} {shape}")


def load_packed(path: str, device: str = "cpu", keep_packed: bool = False):
    """``(model, header)``: a plain float model holding the dequantised weights; with
    ``keep_packed`` its 2-bit Linears are ``PackedLinear2`` modules holding the codes instead."""
    header = read_header(path)
    tensors = load_file(path)
    model = build_model(config_from_dict(header["config"]))
    own = model.state_dict()
    spec = header["tensors"]
    if set(spec) != set(own):
        extra, missing = sorted(set(spec) - set(own)), sorted(set(own) - set(spec))
        raise CidermillError(f"{path}: header tensors do not match the model "
                             f"(unexpected {extra[:3]}, missing {missing[:3]})")
    expected = set()
    state, packed_linears = {}, {}
    for name, s in spec.items():
        if list(own[name].shape) != list(s["shape"]):
            raise CidermillError(f"{path}: header shape of {name} {s['shape']} does not fit the model "
                                 f"({list(own[name].shape)})")
        if "group" in s:  # quantised
            bits, group = s["bits"], s["group"]
            out, inp = s["shape"]
            if bits not in (2, 4, 8) or group <= 0 or inp % group or (inp * bits) % 8:
                raise CidermillError(f"{path}: tensor {name} has impossible bits={bits}/group={group}")
            codes, scale = tensors.get(f"{name}.codes"), tensors.get(f"{name}.scale")
            if codes is None or scale is None:
                raise CidermillError(f"{path}: tensor {name} lacks its codes or scale")
            _check(path, f"{name}.codes", codes, torch.uint8, [out, inp * bits // 8])
            _check(path, f"{name}.scale", scale, torch.float16, [out, inp // group])
            expected |= {f"{name}.codes", f"{name}.scale"}
            state[name] = QuantizedWeight(unpack(codes, bits), scale, bits, group).dequantize()
            if keep_packed and bits == 2 and s["kind"] == "linear":
                packed_linears[name.removesuffix(".weight")] = (codes, scale, group)
        else:
            t = tensors.get(name)
            if t is None:
                raise CidermillError(f"{path}: tensor {name} is in the header but not in the file")
            dtype = getattr(torch, s.get("dtype", ""), None)
            if not isinstance(dtype, torch.dtype):
                raise CidermillError(f"{path}: tensor {name} has an unknown dtype {s.get('dtype')!r} in the header")
            _check(path, name, t, dtype, s["shape"])
            expected.add(name)
            state[name] = t.to(own[name].dtype)
    extra = sorted(set(tensors) - expected)
    if extra:
        raise CidermillError(f"{path}: tensors not described by the header: {extra[:3]}")
    model.load_state_dict(state, strict=True)
    if packed_linears:
        for mod_name, (codes, scale, group) in packed_linears.items():
            parent_name, _, attr = mod_name.rpartition(".")
            setattr(model.get_submodule(parent_name), attr,
                    PackedLinear2(codes, scale, group, impl=model.config.kernels))
    return model.to(device), header


def _safetensors_header(path: str) -> tuple[dict[str, dict], int]:
    """The per-tensor entries of a safetensors file's header (dtype, shape, data_offsets), and the
    header's size in bytes (the 8-byte length included)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
    hdr.pop("__metadata__", None)
    return hdr, 8 + n


def _numel(shape) -> int:
    numel = 1
    for d in shape:
        numel *= d
    return numel


def _tally(path: str, header_bytes: int, rows) -> dict:
    """Bits per weight per kind from ``rows`` of (kind, weights, bytes), and over the whole file."""
    kinds: dict[str, dict] = {}
    for kind, weights, nbytes in rows:
        k = kinds.setdefault(kind, {"weights": 0, "bytes": 0})
        k["weights"] += weights
        k["bytes"] += nbytes
    for k in kinds.values():
        k["bits_per_weight"] = 8 * k["bytes"] / max(k["weights"], 1)
    total = sum(k["weights"] for k in kinds.values())
    file_bytes = os.path.getsize(path)
    return {"file_bytes": file_bytes, "header_bytes": header_bytes, "weights": total,
            "bits_per_weight": 8 * file_bytes / max(total, 1), "kinds": kinds}


def _nbytes(entry: dict) -> int:
    return entry["data_offsets"][1] - entry["data_offsets"][0]


def size_report(path: str) -> dict:
    """Bits per weight per tensor kind of a packed file, measured from the bytes each tensor (or its
    codes and scales) takes in the file."""
    header = read_header(path)
    entries, header_bytes = _safetensors_header(path)
    rows = ((s["kind"], _numel(s["shape"]),
             sum(_nbytes(entries[k]) for k in (name, f"{name}.codes", f"{name}.scale") if k in entries))
            for name, s in header["tensors"].items())
    return _tally(path, header_bytes, rows)


def checkpoint_size_report(path: str) -> dict:
    """The same report for a plain safetensors checkpoint (kinds named by ``fake_quant.kind_of``)."""
    entries, header_bytes = _safetensors_header(path)
    return _tally(path, header_bytes, ((kind_of(name), _numel(e["shape"]), _nbytes(e))
                                       for name, e in entries.items()))
