"""Server-side weight compression with ASTC: ARM's texture codec via Debian's ``astcenc``.

ASTC stores every 6x6 block of texels in 128 bits whatever its content: 3.56 bits per texel. A
weight matrix ``[out, in]`` becomes an 8-bit single-channel image, ``astcenc -cl`` compresses it
and ``astcenc -dl`` decodes it back; the decoded texels are mapped back to weights in torch.

Scaling (``scaling="row"``, the default): each output row is mapped by its own min and max
(two fp16 numbers per row) onto 0..255 before encoding, so a row of small weights is not squeezed
into a few of the 256 levels by another row's outliers; it costs 32 bits per row (0.25 bits per
weight at 128 inputs, 0.016 at 2048). Per-block scales would cost two fp16 per 36 weights (0.9 bits
per weight) on top of the 3.56. On the bench's trained model per-row scaling lowers the error only a
little against ``scaling="global"`` (kept for comparison; bench/results/compress.json): most of
the error is ASTC's own per-block approximation (two endpoints and interpolated weights per 6x6
block), which no scaling scheme removes.

Bits per weight are measured from the ``.astc`` files' sizes (16-byte header included) plus the
scales. A missing ``astcenc`` is refused with one line.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import numpy as np
import torch
from PIL import Image

from corpus.errors import CidermillError

BLOCK = "6x6"


def astcenc() -> str:
    path = shutil.which("astcenc")
    if not path:
        raise CidermillError("astcenc not found on PATH: install Debian's astcenc "
                             "(apt-get install astcenc, or `make system-deps`)")
    return path


def _run(args: list[str]) -> None:
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        raise CidermillError(f"astcenc failed ({' '.join(args[1:3])}): {r.stdout.strip().splitlines()[-1:]}")


def compress_matrix(w: torch.Tensor, workdir: str, scaling: str = "row", quality: str = "-thorough",
                    threads: int = 1) -> tuple[torch.Tensor, dict]:
    """``(w_hat, info)``: the weight after an ASTC round trip, with bytes and error."""
    exe = astcenc()
    wf = w.detach().float().cpu()
    if scaling == "row":
        lo, hi = wf.min(1, keepdim=True).values, wf.max(1, keepdim=True).values
    elif scaling == "global":
        lo, hi = wf.min().reshape(1, 1), wf.max().reshape(1, 1)
    else:
        raise CidermillError(f"unknown ASTC scaling {scaling!r} (row or global)")
    lo, hi = lo.half().float(), hi.half().float()  # stored as fp16
    span = (hi - lo).clamp_min(1e-8)
    img = torch.clamp(torch.round((wf - lo) / span * 255), 0, 255).to(torch.uint8).numpy()
    os.makedirs(workdir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        src, comp, dec = (os.path.join(tmp, n) for n in ("w.png", "w.astc", "d.png"))
        Image.fromarray(img, mode="L").save(src)
        _run([exe, "-cl", src, comp, BLOCK, quality, "-j", str(threads), "-silent"])
        _run([exe, "-dl", comp, dec, "-j", str(threads), "-silent"])
        astc_bytes = os.path.getsize(comp)
        out = np.asarray(Image.open(dec).convert("RGBA"))[..., 0]
    if out.shape != img.shape:
        raise CidermillError(f"astcenc decoded {out.shape}, expected {img.shape}")
    w_hat = torch.from_numpy(out.astype(np.float32)) / 255 * span + lo
    scale_bytes = 2 * 2 * lo.numel()
    err = ((w_hat - wf).norm() / wf.norm().clamp_min(1e-12)).item()
    return w_hat.to(w.dtype), {"astc_bytes": astc_bytes, "scale_bytes": scale_bytes,
                               "weights": wf.numel(),
                               "bits_per_weight": 8 * (astc_bytes + scale_bytes) / wf.numel(),
                               "rel_error": err}


@torch.no_grad()
def compress_model(model: torch.nn.Module, names: list[str], workdir: str, scaling: str = "row",
                   quality: str = "-thorough") -> dict[str, dict]:
    """Replace each named weight by its ASTC round trip, in place; per-layer figures."""
    params = dict(model.named_parameters())
    report = {}
    for name in names:
        w_hat, info = compress_matrix(params[name], workdir, scaling, quality)
        params[name].copy_(w_hat)
        report[name] = info
    return report
