"""A language model that reads images: encoder -> adapter -> image tokens spliced into the LM.

    ids [B, T] with runs of ``image_token_id`` (one run of ``n_tokens`` per image, in row-major order)
    x = lm.tok_embeddings(ids);  x[ids == image_token_id] = adapter(encoder(images)).flatten
    out = lm(ids, targets, doc_ids, inputs_embeds=x)

The LM (dense, on-device or PT-MoE: anything built by training.models.build_model) is untouched:
a text-only batch runs exactly the LM's own computation, so its logits are identical with or
without the vision modules. Loss falls only on text: targets equal to the placeholder are set to
-100 (the model is never asked to predict an image token).
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.models.base import LanguageModel, ModelOutput
from training.vision.adapter import VLAdapter
from training.vision.encoder import VisionEncoder

IGNORE = -100


def image_token_id_for(lm: LanguageModel) -> int:
    """The placeholder id: the LM's last vocabulary row (never produced by the tokenizer, whose
    vocabulary the trainer rounds up below the model's ``vocab_size``)."""
    return lm.config.vocab_size - 1


def text_only_targets(targets: torch.Tensor, image_token_id: int) -> torch.Tensor:
    return targets.masked_fill(targets == image_token_id, IGNORE)


class VisionLanguageModel(nn.Module):
    def __init__(self, lm: LanguageModel, encoder: VisionEncoder, adapter: VLAdapter):
        super().__init__()
        if adapter.d_lm != lm.config.d_model:
            raise ValueError(f"adapter width {adapter.d_lm} != LM d_model {lm.config.d_model}")
        self.lm, self.encoder, self.adapter = lm, encoder, adapter
        self.image_token_id = image_token_id_for(lm)

    @property
    def n_image_tokens(self) -> int:
        return self.adapter.n_tokens

    def image_tokens(self, images: torch.Tensor) -> torch.Tensor:
        return self.adapter(self.encoder(images))

    def embed(self, input_ids: torch.Tensor, images: torch.Tensor | None) -> torch.Tensor:
        x = self.lm.tok_embeddings(input_ids)
        slots = input_ids == self.image_token_id
        n_slots = int(slots.sum())
        n_img = 0 if images is None else images.shape[0]
        if n_slots != n_img * self.n_image_tokens:
            raise ValueError(f"{n_slots} image placeholders for {n_img} images of {self.n_image_tokens} tokens")
        if n_img:
            tok = self.image_tokens(images).to(x.dtype).reshape(-1, x.shape[-1])
            x = x.masked_scatter(slots.unsqueeze(-1), tok)
        return x

    def forward(self, input_ids, targets=None, doc_ids=None, images=None, return_logits=False) -> ModelOutput:
        x = self.embed(input_ids, images)
        if targets is not None:
            targets = text_only_targets(targets, self.image_token_id)
        return self.lm(input_ids, targets=targets, doc_ids=doc_ids, inputs_embeds=x, return_logits=return_logits)

    @torch.no_grad()
    def greedy(self, prompt: list[int], image: torch.Tensor | None, max_new: int, stop: int) -> list[int]:
        """Greedy continuation of one prompt (no KV cache: short answers on small models)."""
        ids = list(prompt)
        img = None if image is None else image.unsqueeze(0)
        emb = self.embed(torch.tensor([ids]), img)
        out: list[int] = []
        for _ in range(max_new):
            if emb.shape[1] >= self.lm.config.max_seq_len:
                break
            logits = self.lm(torch.zeros(1, emb.shape[1], dtype=torch.long), inputs_embeds=emb).logits[0, -1]
            logits[self.image_token_id] = float("-inf")
            nxt = int(logits.argmax())
            if nxt == stop:
                break
            out.append(nxt)
            emb = torch.cat([emb, self.lm.tok_embeddings(torch.tensor([[nxt]]))], dim=1)
        return out
