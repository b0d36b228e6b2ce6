"""One module per CLI verb (see pipelines/cli.py)."""
