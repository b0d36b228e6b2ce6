"""Generator of the demo site (not needed at serve time)."""
