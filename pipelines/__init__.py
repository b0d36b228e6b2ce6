"""cidermill pipelines package: the Beam jobs, the CLI, the report page and the demo (the top floor).

Importing Beam logs "apitools not found, and bigquery client libraries are not available" on the
root logger from apache_beam/io/gcp; cidermill never uses BigQuery, so that one notice is filtered
here, before any pipeline module imports Beam. Every other log record passes.
"""
import logging


class _DropBeamApitoolsNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "root" and str(record.msg).startswith("apitools not found"))


logging.getLogger().addFilter(_DropBeamApitoolsNotice())
