"""cidermill filters package."""
