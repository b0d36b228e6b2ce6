"""SFT and RL data built from what the project has: synthetic tables and charts, documents, and
tool-use trajectory trees on training/posttrain's tool platform.

Each builder yields rows ``{"id", "kind", "split", "language", "messages", "task"}`` (messages and
task as JSON text); ``write.write_conversations`` checks each against the chat template and the
context, and writes the kept ones as a shard dataset with a report of the dropped.
Held-out rows come from source items the training split never sees (``split`` is decided by the
source item, so no question about a held-out table leaks into training).
"""
