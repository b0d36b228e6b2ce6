"""Put a training.vision encoder (ViTDet + Register-Window, or a plain ViT) in an open_clip model.

``attach(model, vcfg)`` replaces ``model.visual`` with ``EncoderTower``: the encoder, the mean of
its patch features, and a linear projection to the CLIP embedding width. open_clip's text tower,
loss and ``encode_image`` are unchanged. Images go through the vision loader's letterbox policy
(training.vision.image_policy), so CLIP-pretrained weights see exactly what the VLM stages see.
The encoder config travels in the checkpoint metadata (``extra.vision_encoder``).
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.vision.config import VisionConfig
from training.vision.encoder import VisionEncoder
from training.vision.image_policy import letterbox


class EncoderTower(nn.Module):
    def __init__(self, vcfg: VisionConfig, embed_dim: int):
        super().__init__()
        self.encoder = VisionEncoder(vcfg)
        self.proj = nn.Linear(vcfg.width, embed_dim, bias=False)
        nn.init.normal_(self.proj.weight, std=vcfg.width ** -0.5)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(self.encoder(images).mean(1))


def attach(model, vcfg: VisionConfig):
    """(model with the encoder as its image tower, preprocess PIL image -> tensor)."""
    embed_dim = model.text_projection.shape[1] if hasattr(model, "text_projection") else model.visual.output_dim
    model.visual = EncoderTower(vcfg, int(embed_dim))

    def preprocess(im):
        return torch.from_numpy(letterbox(im, vcfg.image_size)[0])

    return model, preprocess
