"""Test-wide setup. TRITON_INTERPRET must be set before anything imports triton (kernels on CPU tensors need the interpreter).

Tests use tiny models and run on a 2-core machine where one torch thread per process is faster
than two (and several test processes, Beam workers or torchrun ranks may run at once).
"""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


# -- a real Dask cluster on 127.0.0.1 (scheduler + 2 single-threaded workers), one per session --------
import pytest  # noqa: E402


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory):
    """Yields the scheduler address 'HOST:PORT'; workers import this checkout (PYTHONPATH)."""
    from tests_dask import start_cluster  # tests/tests_dask.py
    with start_cluster(str(tmp_path_factory.mktemp("dask")), nworkers=2) as address:
        yield address
