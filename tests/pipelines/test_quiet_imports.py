"""Commands print what matters: Beam's BigQuery "apitools not found" notice is filtered, other warnings are not."""
import subprocess
import sys


def test_beam_apitools_notice_is_silenced_and_other_warnings_pass():
    code = ("import pipelines.text_pipeline, apache_beam.io.gcp.internal.clients.bigquery, logging; "
            "logging.warning('a real warning')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "apitools" not in r.stderr
    assert "a real warning" in r.stderr
