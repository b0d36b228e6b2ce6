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


# -- an S3-compatible server (moto_server) on 127.0.0.1, one per test module that asks -------------------
@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """An S3 endpoint with bucket `cider`; the AWS_* settings every reader and writer picks up."""
    import pyarrow.fs as pafs
    from s3_server import moto  # tests/s3_server.py
    tmp = tmp_path_factory.mktemp("s3")
    with moto(tmp) as url:
        env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}
        mp = pytest.MonkeyPatch()
        for k, v in env.items():
            mp.setenv(k, v)
        pafs.S3FileSystem(endpoint_override=url, allow_bucket_creation=True).create_dir("cider")
        yield url
        mp.undo()
