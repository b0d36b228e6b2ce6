"""`run_text`: one text job, on the engine its options choose, and its summary.

No Beam option (or `--runner local`): the local engine, pipelines/text_local.py (`--workers N`
processes). Any Beam
option (`--runner dask`, `--direct_num_workers`, a service runner, `--runner FnApiRunner`): the
Beam pipeline, pipelines/text_pipeline.py. Both write the same shards.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from corpus.errors import ConfigError
from corpus.provenance import make_provenance
from corpus.reader import ShardDataset
from corpus.report import read_report
from filters.chain import load_config
from pipelines.beam_options import uses_local_engine
from pipelines.local_workers import AUTO, MAX_WORKERS
from pipelines.text_rows import rejected_dir_for, where

log = logging.getLogger(__name__)


def run_text(pages_dir: str, out_dir: str, config_path: str | None = None, beam_args: Sequence[str] | None = None,
             *, rejected_dir: str | None = "", overwrite: bool = False, overrides: dict | None = None,
             target_bytes: int | None = None, command: list[str] | None = None, workers: int | str = AUTO,
             memory_check: bool = True) -> dict[str, Any]:
    """Run the text pipeline; returns a summary {rows_in, kept, dropped: {reason: n}, out_dir, ...}.

    `rejected_dir=""` takes the config's choice (default OUT.rejected); None writes no rejected rows.
    `workers`: processes of the local engine, or "auto" (pipelines/local_workers.py; Beam runs take
    Beam's own worker options);
    `memory_check`: the local engine refuses an input whose rows would not fit in memory."""
    cfg = load_config(config_path, overrides)
    if rejected_dir == "":
        rejected_dir = rejected_dir_for(out_dir, cfg)
    if where(pages_dir) == where(out_dir):
        raise ConfigError("--out must differ from --in")
    prov = make_provenance("documents", config=cfg, inputs=[pages_dir], command=command)
    local = uses_local_engine(beam_args)
    if workers != AUTO and not (isinstance(workers, int) and 1 <= workers <= MAX_WORKERS):
        raise ConfigError(f"--workers must be auto or in 1..{MAX_WORKERS}, got {workers}")
    if workers != AUTO and workers > 1 and not local:
        raise ConfigError("--workers sets the local engine's processes; a Beam run takes Beam's options "
                          "(--direct_num_workers=N --direct_running_mode=multi_processing, or --runner dask)")
    log.info("text: %s -> %s (rejected rows: %s; engine: %s)", pages_dir, out_dir, rejected_dir or "not written",
             (f"local, --workers {workers}" if local else "Beam"))
    kw = dict(rejected_dir=rejected_dir, provenance=prov, overwrite=overwrite, target_bytes=target_bytes)
    if local:
        from pipelines.text_local import run_text_local  # noqa: PLC0415
        run_text_local(pages_dir, out_dir, cfg, workers=workers, memory_check=memory_check, **kw)
    else:
        from pipelines.text_pipeline import run_on_beam  # noqa: PLC0415
        run_on_beam(pages_dir, out_dir, cfg, beam_args, **kw)
    return summary(out_dir, rejected_dir, cfg)


def summary(out_dir: str, rejected_dir: str | None, cfg: dict[str, Any]) -> dict[str, Any]:
    """The finished job's figures, read back from what it wrote; renders the report page."""
    from pipelines.report_page import render_report  # noqa: PLC0415
    html_path = render_report(out_dir)
    stats = read_report(out_dir)
    first = stats.stages[cfg["stages"][0]]
    dropped: dict[str, int] = {}
    for st in stats.stages.values():
        for reason, n in st.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
    kept = ShardDataset(out_dir).manifest.rows
    return {"rows_in": first.rows_in, "kept": kept, "dropped": dict(sorted(dropped.items())),
            "out_dir": out_dir, "rejected_dir": rejected_dir, "report": html_path,
            "funnel": {n: {"in": s.rows_in, "kept": s.kept} for n, s in stats.stages.items()}}
