"""cidermill training package."""
