"""cidermill pipelines package."""
