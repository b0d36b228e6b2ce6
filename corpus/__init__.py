"""cidermill corpus package."""
