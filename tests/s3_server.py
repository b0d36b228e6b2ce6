"""An S3-compatible server (moto_server) on 127.0.0.1 for the tests that read and write s3:// datasets.
The `s3` fixture (tests/conftest.py) starts one per test module; tests that need a server of their own
(other settings) call `moto()`."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request

MOTO = os.path.join(os.path.dirname(sys.executable), "moto_server")


@contextlib.contextmanager
def moto(tmp_path, **env):
    from tests_dask import free_port
    port = free_port()
    log = open(tmp_path / f"moto-{port}.log", "wb")
    p = subprocess.Popen([MOTO, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log,
                         env=dict(os.environ, **env))
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        p.terminate()
        p.wait(timeout=10)
        log.close()
