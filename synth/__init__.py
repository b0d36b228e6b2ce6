"""cidermill synth package."""
