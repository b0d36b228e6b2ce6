"""Contrastive (CLIP) training of open_clip models on pair shards, and its held-out evaluation."""
