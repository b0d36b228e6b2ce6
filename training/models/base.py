"""What every architecture shares: token embedding, positions, final norm, tied output and loss.

A subclass builds its layers in ``__init__`` and implements
``backbone(x, rope, doc_ids, cache) -> (x, aux_loss)`` and ``cache_specs() -> {layer key: window}``.

Forward contract (all architectures)::

    out = model(input_ids, targets=None, doc_ids=None)
    out.logits    [B, T, V] float; None when targets are given (fused linear+CE) unless
                  return_logits=True
    out.loss      mean cross-entropy over targets != -100 (None without targets)
    out.aux_loss  0-dim tensor: weighted MoE load-balance + router z-loss, summed over MoE layers
                  (0 for a model without MoE). Train on ``out.loss + out.aux_loss``.

``doc_ids [B, T]``: document index of every token in a packed row. Attention never crosses a
document boundary and RoPE positions restart at 0 at each document start (a document is a run
of equal consecutive ids).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import torch
import torch.nn as nn

from training.kernels import ops
from training.models.config import ModelConfig, SequenceTooLongError
from training.models.kv_cache import KVCache
from training.models.layers import Embedding, Linear, RMSNorm, positions_from_doc_ids, rope_tables
from training.models.moe import Experts

OUTPUT_PROJECTIONS = ("attn.wo.weight", "mlp.w_down.weight", "experts.w_down", "shared.w_down.weight")


@dataclass
class ModelOutput:
    logits: torch.Tensor | None
    loss: torch.Tensor | None
    aux_loss: torch.Tensor


class LanguageModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        # one draw from the global RNG; every parameter is then initialised from its own name, so a
        # model holding a subset of PT-MoE tracks gets exactly the full model's weights for them
        self._init_seed = int(torch.randint(0, 2**62, (1,), device="cpu").item())
        self.tok_embeddings = Embedding(cfg.vocab_size, cfg.d_model)
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps, cfg.kernels)
        self.lm_head = None if cfg.tie_embeddings else Linear(cfg.d_model, cfg.vocab_size)

    # ---- subclasses ----------------------------------------------------------------------------
    def backbone(self, x, rope, doc_ids, cache):  # pragma: no cover - abstract
        raise NotImplementedError

    def cache_specs(self) -> dict[str, int | None]:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- init ----------------------------------------------------------------------------------
    def init_weights(self) -> None:
        """Normal(0, init_std) everywhere, output projections scaled by 1/sqrt(2 * n_layers),
        norm weights 1. Deterministic per parameter name (see ``__init__``)."""
        cfg = self.config
        for name, p in self.named_parameters():
            if p.is_meta:
                continue
            if name.endswith("norm.weight"):
                nn.init.ones_(p)
                continue
            std = cfg.init_std
            if name.endswith(OUTPUT_PROJECTIONS):
                std /= (2 * cfg.n_layers) ** 0.5
            g = torch.Generator(device=p.device)
            g.manual_seed(self._init_seed ^ zlib.crc32(name.encode()))
            with torch.no_grad():
                p.normal_(0.0, std, generator=g)

    # ---- forward -------------------------------------------------------------------------------
    def output_weight(self) -> torch.Tensor:
        return self.tok_embeddings.weight if self.lm_head is None else self.lm_head.weight

    def forward(self, input_ids: torch.Tensor, targets: torch.Tensor | None = None,
                doc_ids: torch.Tensor | None = None, cache: KVCache | None = None,
                return_logits: bool = False, inputs_embeds: torch.Tensor | None = None) -> ModelOutput:
        """``inputs_embeds [B, T, d]``: use these instead of ``tok_embeddings(input_ids)`` (image
        tokens spliced in by training.vision.vlm); ``input_ids`` still give the shape."""
        cfg = self.config
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be [B, T], got shape {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        start = self._check_length(T, cache)
        if cache is not None and doc_ids is not None:
            raise ValueError("doc_ids are not supported with a KV cache (generate one document per row)")
        if doc_ids is not None and doc_ids.shape != input_ids.shape:
            raise ValueError(f"doc_ids shape {tuple(doc_ids.shape)} != input_ids shape {(B, T)}")

        if doc_ids is not None:
            positions = positions_from_doc_ids(doc_ids)
        else:
            positions = torch.arange(start, start + T, device=input_ids.device)
        rope = rope_tables(positions, cfg)
        x = self.tok_embeddings(input_ids) if inputs_embeds is None else inputs_embeds
        x, aux = self.backbone(x, rope, doc_ids, cache)
        if cache is not None:
            cache.pos += T
        return self.head(self.norm(x), targets, aux, return_logits)

    def _check_length(self, T: int, cache: KVCache | None) -> int:
        """The first position of ``T`` new tokens; refuses more than the cache or context holds."""
        cfg = self.config
        start = 0 if cache is None else cache.pos
        if cache is not None and start + T > cache.max_len:
            raise SequenceTooLongError(f"KV cache holds {cache.max_len} positions; {start} are used "
                                       f"and {T} more were given")
        if start + T > cfg.max_seq_len:
            raise SequenceTooLongError(
                f"sequence of {start + T} tokens is longer than max_seq_len={cfg.max_seq_len} "
                f"of model '{cfg.name}'; use shorter sequences or a config with a longer context")
        return start

    @torch.no_grad()
    def prefill(self, input_ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Run a prompt into ``cache``; return the logits after its last token ``[B, V]`` (the only
        ones generation reads). Architectures that can skip work for the other positions override it."""
        return self(input_ids, cache=cache).logits[:, -1]

    def head(self, h, targets, aux, return_logits) -> ModelOutput:
        W = self.output_weight()
        aux = aux if aux is not None else h.new_zeros((), dtype=torch.float32)
        if targets is None or return_logits:
            logits = (h @ W.t()).float()
            loss = None
            if targets is not None:
                t = targets.reshape(-1)
                loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t,
                                                   ignore_index=-100, reduction="sum")
                loss = loss / (t != -100).sum().clamp_min(1)
            return ModelOutput(logits, loss, aux)
        if targets.shape != h.shape[:2]:
            raise ValueError(f"targets shape {tuple(targets.shape)} != input shape {tuple(h.shape[:2])}")
        loss = ops.linear_cross_entropy(h.reshape(-1, h.shape[-1]), W.to(h.dtype), targets.reshape(-1),
                                        ignore_index=-100, impl=self.config.kernels)
        return ModelOutput(None, loss, aux)

    # ---- vocabulary ----------------------------------------------------------------------------
    @torch.no_grad()
    def resize_token_embeddings(self, new_vocab_size: int, new_rows: torch.Tensor | None = None,
                                new_output_rows: torch.Tensor | None = None) -> None:
        """Grow the vocabulary, keeping every old row (old token ids keep their logits).

        ``new_rows [new_vocab_size - old, d]`` initialise the new embedding rows (default:
        Normal(0, init_std)); a tied output grows with the embedding. An untied ``lm_head`` gets
        ``new_output_rows`` (default: ``new_rows``). ``model.config.vocab_size`` is updated.
        """
        old, d = self.tok_embeddings.weight.shape
        if new_vocab_size < old:
            raise ValueError(f"new_vocab_size {new_vocab_size} is smaller than the current {old}")
        n = new_vocab_size - old
        W = self.tok_embeddings.weight
        if new_rows is None:
            new_rows = torch.randn(n, d, device=W.device, dtype=W.dtype) * self.config.init_std
        if tuple(new_rows.shape) != (n, d):
            raise ValueError(f"new_rows must be [{n}, {d}], got {tuple(new_rows.shape)}")
        emb = Embedding(new_vocab_size, d, device=W.device, dtype=W.dtype)
        emb.weight.copy_(torch.cat([W, new_rows.to(W)]))
        emb.weight.requires_grad_(W.requires_grad)
        self.tok_embeddings = emb
        if self.lm_head is not None:
            H = self.lm_head.weight
            rows = new_rows if new_output_rows is None else new_output_rows
            head = Linear(d, new_vocab_size, device=H.device, dtype=H.dtype)
            head.weight.copy_(torch.cat([H, rows.to(H)]))
            self.lm_head = head
        self.config = replace(self.config, vocab_size=new_vocab_size)

    # ---- inference -----------------------------------------------------------------------------
    def allocate_kv_cache(self, batch_size: int, max_len: int | None = None, kv_int8: bool = False,
                          dtype: torch.dtype | None = None, device=None) -> KVCache:
        """Preallocate the KV cache for ``batch_size`` sequences of up to ``max_len`` tokens."""
        cfg = self.config
        max_len = max_len or cfg.max_seq_len
        if max_len > cfg.max_seq_len:
            raise SequenceTooLongError(f"KV cache of {max_len} positions exceeds "
                                       f"max_seq_len={cfg.max_seq_len} of model '{cfg.name}'")
        w = self.tok_embeddings.weight
        return KVCache(self.cache_specs(), batch_size, cfg.n_kv_heads, cfg.attn_head_dim, max_len,
                       int8=kv_int8, dtype=dtype or w.dtype, device=device or w.device,
                       impl=cfg.kernels)

    # ---- memory --------------------------------------------------------------------------------
    def set_activation_checkpointing(self, on: bool = True) -> None:
        """Recompute each layer's activations in backward instead of keeping them (long contexts)."""
        for m in self.modules():
            if hasattr(m, "activation_checkpointing"):
                m.activation_checkpointing = on

    # ---- bookkeeping ---------------------------------------------------------------------------
    def num_parameters(self, active: bool = False) -> int:
        """All parameters, or (``active=True``) those one token uses: top_k of each MoE's experts."""
        total = 0
        for m in self.modules():
            for p in m.parameters(recurse=False):
                n = p.numel()
                if active and isinstance(m, Experts):
                    n = n * self.config.top_k // self.config.n_experts
                total += n
        return total
