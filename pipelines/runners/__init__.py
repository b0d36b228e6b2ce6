"""Beam runners the project owns (today: Dask, see dask_runner.py)."""
