"""Beam pipeline options for every Beam verb: unknown CLI --flags pass straight through.

The local default is the in-process FnApiRunner: Beam's DirectRunner would first try to download
the Prism binary, which cannot work offline. Any --runner given wins.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Sequence

from corpus.errors import CidermillError

DEFAULT_RUNNER = "FnApiRunner"
LOCAL = "local"  # `--runner local`: a verb's own engine without Beam (only `text` has one)
# short runner names the project adds (Beam accepts a class path for --runner)
SHORT_RUNNERS = {"dask": "pipelines.runners.dask_runner.DaskRunner"}


def normalise_args(args: list[str]) -> list[str]:
    """`--flag value` pairs become `--flag=value`; short runner names become class paths."""
    out: list[str] = []
    for a in args:
        if not a.startswith("--"):
            if not out or "=" in out[-1]:
                raise CidermillError(f"unexpected argument {a!r} (Beam options look like --name=value)")
            out[-1] = f"{out[-1]}={a}"
        else:
            out.append(a)
    for i, a in enumerate(out):
        name, _, value = a.partition("=")
        if name == "--runner" and value.lower() in SHORT_RUNNERS:
            out[i] = f"--runner={SHORT_RUNNERS[value.lower()]}"
    return out


def option_values(beam_args: Sequence[str] | None) -> dict[str, str]:
    """{--name: value} of these Beam options (normalise_args's form; raises CidermillError as it does)."""
    return dict(a.partition("=")[::2] for a in normalise_args(list(beam_args or [])))


def local_dask_workers(beam_args: Sequence[str] | None) -> int | None:
    """The worker count of the local Dask cluster these options ask for (`--runner dask` without
    --dask_client_address; --dask_workers, default 2), else None."""
    try:
        opts = option_values(beam_args)
        if opts.get("--runner") != SHORT_RUNNERS["dask"] or opts.get("--dask_client_address"):
            return None
        return int(opts.get("--dask_workers") or 2)
    except (CidermillError, ValueError):
        return None  # the job itself reports a bad option


def uses_local_engine(beam_args: Sequence[str] | None) -> bool:
    """True for `--runner local`, and for no Beam option at all on a verb with a local engine.
    Any other option means Beam: workers, Dask or a service runner."""
    args = normalise_args(list(beam_args or []))
    if not args:
        return True
    if any(a.partition("=")[2].lower() == LOCAL for a in args if a.partition("=")[0] == "--runner"):
        if len(args) > 1:
            raise CidermillError(f"--runner {LOCAL} runs in this process and takes no other Beam options "
                                 f"(got {' '.join(a for a in args if not a.startswith('--runner'))})")
        return True
    return False


def pipeline_options(beam_args: Sequence[str] | None = None, **overrides):
    from apache_beam.options.pipeline_options import PipelineOptions

    args = normalise_args(list(beam_args or []))
    has_runner = any(a == "--runner" or a.startswith("--runner=") for a in args)
    if not has_runner:
        # multi-worker local runs need the portable DirectRunner machinery; FnApiRunner honours
        # direct_num_workers/direct_running_mode too, so it stays the default either way.
        args.append(f"--runner={DEFAULT_RUNNER}")
    opts = PipelineOptions(args, **overrides)
    logging.getLogger("apache_beam").setLevel(logging.WARNING)
    return opts


def controller_holds_collections(pipeline) -> bool:
    """Whether `pipeline` runs on one of Beam's local runners (FnApiRunner, and DirectRunner, which
    runs on it): they keep every collection that crosses a fused stage, encoded, in their one
    controller process, and with `multi_processing` move it through that process to the workers.
    A step that would make such a runner hold whole rows can stage them as files instead
    (pipelines/staged_rows.py). Dask keeps partitions in its workers' memory and moves them only
    between workers."""
    return type(pipeline.runner).__name__ in ("FnApiRunner", "DirectRunner", "SwitchingDirectRunner")


@contextlib.contextmanager
def beam_job(beam_args: Sequence[str] | None = None) -> Iterator:
    """`with beam.Pipeline(options=pipeline_options(beam_args)) as p`, and once the job has run,
    the staging areas of the datasets it finished go (corpus/writer.py drop_finished_staging): only
    then, since a distributed runner may rerun a shard writer, which reads them, until the driver
    has every result."""
    import apache_beam as beam

    from corpus.writer import drop_finished_staging, noted_outputs
    before = noted_outputs()
    with beam.Pipeline(options=pipeline_options(beam_args)) as p:
        yield p
    for d in sorted(noted_outputs() - before):
        drop_finished_staging(d)


def run_pipeline(build, beam_args: Sequence[str] | None = None):
    """Build with `build(pipeline)` and run to completion; returns the pipeline result."""
    with beam_job(beam_args) as p:
        build(p)
    return p
