"""Post-training: the chat format, supervised fine-tuning on conversations, and GRPO-style RL.

Torch only, like the rest of training/: conversations come in as plain dicts (built by the data
builders above this floor) and leave as packed token rows, checkpoints and logs.
"""
