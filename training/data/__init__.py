"""Token data for training: memory-mapped token shards, packing, mixtures, resumable loading."""
