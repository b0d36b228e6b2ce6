"""Where the images stage gets each distinct image src's bytes: a --local-images folder, WARC files,
or a live fetch (one host's srcs on one worker, for politeness). Each path yields (src, info), the
image's checks or its drop reason (imagetext/image_info.py)."""
from __future__ import annotations

import os

import apache_beam as beam

from crawl.image_fetch import ImageFetcher
from crawl.image_warc import iter_warc_images, url_key
from crawl.urls import hostname_of
from crawl.warc_records import warc_ranges
from imagetext.config import ImagesConfig
from imagetext.image_info import fetch_host, not_in_warc, warc_infos
from imagetext.local_images import local_root, local_src_info


class _ReadLocal(beam.DoFn):
    """src -> (src, info) read from its --local-images folder. The folders are named to a remote
    runner (dataset_paths, runners/dask_client.py), so a worker that does not see them fails the
    job before it starts instead of dropping every image as image_not_in_folder."""

    def __init__(self, cfg: ImagesConfig):
        self.cfg = cfg

    def dataset_paths(self) -> list[str]:
        return [folder for _, folder in self.cfg.local_images or ()]

    def process(self, src: str):
        yield local_src_info(src, self.cfg)


class FetchHostDoFn(beam.DoFn):
    """(host, [src]) -> (src, info); one host's images one at a time, in sorted order."""

    def __init__(self, cfg: ImagesConfig):
        self.cfg = cfg

    def setup(self):
        self.fetcher = ImageFetcher(self.cfg.fetch)

    def process(self, element):
        _, srcs = element
        yield from fetch_host(srcs, self.fetcher, self.cfg)

    def teardown(self):
        f = getattr(self, "fetcher", None)
        if f is not None:
            f.close()


def _warc_lookup(item: tuple[str, dict[str, list]], cfg: ImagesConfig):
    """(canonical url, {"src": [srcs], "rec": [records]}) -> (src, info); srcs with no record go to
    the "missing" output."""
    found, missing = warc_infos(item[1]["src"], list(item[1]["rec"]), cfg)
    yield from found
    for src in missing:
        yield beam.pvalue.TaggedOutput("missing", src)


class _WarcRecords(beam.DoFn):
    """(WARC file path, range) -> (url, image record) of each image response archived there."""

    def __init__(self, files: list[str], fc):
        self.files, self.fc = files, fc

    def file_paths(self) -> list[str]:  # what a remote runner's workers must hold (runners/dask_client.py)
        return self.files

    def process(self, item: tuple[str, int, int | None]):
        path, start, end = item
        for r in iter_warc_images(path, self.fc.user_agent, self.fc.optout_token, self.fc.max_bytes,
                                  span=(start, end)):
            yield r["url"], r


class ReadWarcImages(beam.PTransform):
    """srcs -> ((src, info) found in cfg.warc_files, srcs not archived there)."""

    def __init__(self, cfg: ImagesConfig):
        super().__init__()
        self.cfg = cfg

    def expand(self, srcs):
        files = sorted(os.path.abspath(f) for f in self.cfg.warc_files)
        ranges = [(path, a, b) for path in files for a, b in warc_ranges(path)]   # a big file: many items
        recs = (srcs.pipeline | "Files" >> beam.Create(ranges) | "Spread" >> beam.Reshuffle()
                | "Records" >> beam.ParDo(_WarcRecords(files, self.cfg.fetch)))
        keyed = srcs | "SrcKey" >> beam.Map(lambda s: (url_key(s) or "\x00bad:" + s, s))
        looked = ({"src": keyed, "rec": recs} | "Join" >> beam.CoGroupByKey()
                  | "Lookup" >> beam.FlatMap(_warc_lookup, self.cfg).with_outputs("missing", main="found"))
        return looked.found, looked.missing


class FetchImages(beam.PTransform):
    """refs -> (src, info) for every distinct src of a page that allows training, fetched once.

    Srcs under a --local-images URL are read from its folder (imagetext/local_images.py). With WARC
    files, srcs are first looked up there (by canonical URL); the ones not archived are fetched live
    (warc_missing="fetch") or dropped as image_not_in_warc. One host's fetches stay on one worker
    (politeness)."""

    def __init__(self, cfg: ImagesConfig):
        super().__init__()
        self.cfg = cfg

    def expand(self, refs):
        srcs = (refs
                | "TrainablePages" >> beam.Filter(lambda r: r["page_training_allowed"])   # opted-out: never fetched
                | "Srcs" >> beam.Map(lambda r: r["src"]) | "HasSrc" >> beam.Filter(bool)
                | "DistinctSrc" >> beam.Distinct())
        infos = []
        if self.cfg.local_images:
            roots = self.cfg.local_images
            split = srcs | "InFolder" >> beam.Partition(lambda s, n: 0 if local_root(s, roots) else 1, 2)
            infos.append(split[0] | "ReadLocal" >> beam.ParDo(_ReadLocal(self.cfg)))
            srcs = split[1]
        if self.cfg.warc_files:
            found, srcs = srcs | "FromWarc" >> ReadWarcImages(self.cfg)
            infos.append(found)
            if self.cfg.warc_missing == "drop":
                infos.append(srcs | "NotInWarc" >> beam.Map(lambda s: (s, not_in_warc(s))))
                srcs = None
        if srcs is not None:
            infos.append(srcs
                         | "ByHost" >> beam.Map(lambda s: (hostname_of(s), s)) | "GroupHost" >> beam.GroupByKey()
                         | "FetchCheck" >> beam.ParDo(FetchHostDoFn(self.cfg)))
        return tuple(infos) | "Infos" >> beam.Flatten()
