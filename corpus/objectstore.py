"""Datasets on object storage: any dataset DIR may be `s3://bucket/prefix` (through pyarrow.fs).

Workers on different machines then read and write one place. Local paths keep using the os
module (memory maps, fsync, rename); a URI goes through pyarrow's S3 filesystem, which takes its
endpoint and credentials from the usual AWS settings (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
Object stores have no rename: a shard is uploaded under a temporary key and then moved (copy +
delete) to its final key; the manifest is one PUT, written last, so a reader never sees a
dataset whose manifest exists before its shards do.

Errors from the store become one-line ShardErrors naming the bucket and what is wrong.
"""
from __future__ import annotations

import functools
import hashlib
import os
import uuid

from corpus.errors import ShardError


def _pafs():
    """pyarrow.fs, imported on the first remote path (with S3 and TLS: ~10 ms a process that
    only reads and writes local datasets does not pay)."""
    import pyarrow.fs
    return pyarrow.fs


def is_remote(path: str) -> bool:
    return "://" in str(path)


def join(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}" if is_remote(directory) else os.path.join(directory, name)


@functools.lru_cache(maxsize=8)
def _filesystem(scheme_and_bucket: str, _endpoint: str | None, _key_id: str | None):
    """Cached per bucket and per endpoint/credentials in the environment (they are read here)."""
    try:
        fs, _ = _pafs().FileSystem.from_uri(scheme_and_bucket)
    except (OSError, ValueError, TypeError) as e:
        raise ShardError(f"{scheme_and_bucket}: unsupported or malformed dataset URI ({e})") from None
    return fs


def resolve(uri: str):
    """s3://bucket/key -> (pyarrow FileSystem, 'bucket/key')."""
    scheme, _, rest = uri.partition("://")
    if scheme != "s3":
        raise ShardError(f"{uri}: only local paths and s3:// URIs are supported for datasets")
    bucket = rest.split("/", 1)[0]
    if not bucket:
        raise ShardError(f"{uri}: no bucket in the URI (expected s3://bucket/prefix)")
    env = os.environ
    return (_filesystem(f"s3://{bucket}", env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT_URL_S3"),
                        env.get("AWS_ACCESS_KEY_ID")), rest.rstrip("/"))


def explain(uri: str, e: Exception) -> ShardError:
    """A store error as one line: missing bucket, refused credentials, or the store's own words."""
    msg = str(e)
    bucket = uri.split("://", 1)[-1].split("/", 1)[0]
    up = msg.upper()
    if "NO_SUCH_BUCKET" in up or "NOSUCHBUCKET" in up or f"BUCKET '{bucket.upper()}' NOT FOUND" in up:
        return ShardError(f"{uri}: bucket {bucket!r} does not exist")
    if any(k in up for k in ("ACCESS_DENIED", "ACCESSDENIED", "INVALID_ACCESS_KEY", "INVALIDACCESSKEY",
                             "SIGNATURE_DOES_NOT_MATCH", "SIGNATUREDOESNOTMATCH", "HTTP STATUS 403", "FORBIDDEN")):
        return ShardError(f"{uri}: the object store refused the credentials (check AWS_ACCESS_KEY_ID / "
                          "AWS_SECRET_ACCESS_KEY / AWS_PROFILE)")
    first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    return ShardError(f"{uri}: object store error: {first[:300]}")


def _call(uri: str, fn, *args):
    try:
        return fn(*args)
    except ShardError:
        raise
    except OSError as e:
        raise explain(uri, e) from None


def check_bucket(uri: str) -> None:
    """Fail early, in one line, when the bucket is missing or the credentials are refused."""
    fs, path = resolve(uri)
    bucket = path.split("/", 1)[0]
    info = _call(uri, fs.get_file_info, bucket)
    if info.type == _pafs().FileType.NotFound:
        raise ShardError(f"{uri}: bucket {bucket!r} does not exist")
    _call(uri, fs.get_file_info, _pafs().FileSelector(path, recursive=False, allow_not_found=True))


def exists(uri: str) -> bool:
    fs, path = resolve(uri)
    return _call(uri, fs.get_file_info, path).type != _pafs().FileType.NotFound


def size(uri: str) -> int:
    fs, path = resolve(uri)
    return int(_call(uri, fs.get_file_info, path).size)


def listdir(uri: str) -> list[str]:
    """Names directly under `uri` (files and 'directories'), [] if nothing is there."""
    fs, path = resolve(uri)
    infos = _call(uri, fs.get_file_info, _pafs().FileSelector(path, recursive=False, allow_not_found=True))
    return sorted(i.base_name for i in infos)


def read_bytes(uri: str) -> bytes:
    fs, path = resolve(uri)

    def _read():  # a missing object is answered here: _call would turn it into a generic store error
        try:
            with fs.open_input_stream(path) as f:
                return f.read()
        except FileNotFoundError:
            return None
    data = _call(uri, _read)
    if data is None:
        raise ShardError(f"{uri}: no such object")
    return data


def write_bytes(uri: str, data: bytes) -> None:
    """One PUT (atomic on S3: readers see the old object or the new one)."""
    fs, path = resolve(uri)

    def _write():
        with fs.open_output_stream(path) as f:
            f.write(data)
    _call(uri, _write)


def write_whole(path: str, data: bytes, fsync: bool = False) -> None:
    """`data` as the file at `path` (local or s3://), seen whole or not at all: one PUT on the
    store; on disk a temporary name renamed into place (synced first with `fsync`)."""
    if is_remote(path):
        write_bytes(path, data)
        return
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def upload_dir(local_dir: str, uri: str) -> None:
    """Every file under `local_dir` (a missing one has none) to the same relative key under `uri`,
    one PUT each, in path order: a report's figures, a crawl's WARC files."""
    for root, dirs, files in os.walk(local_dir):
        dirs.sort()
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(root, name), local_dir).replace(os.sep, "/")
            with open(os.path.join(root, name), "rb") as f:
                write_bytes(join(uri, rel), f.read())


def download(uri: str, path: str) -> tuple[str, int]:
    """One object to the local file `path`, streamed under a temporary name and renamed when
    complete -> (sha256, size) of the bytes it holds."""
    fs, key = resolve(uri)
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
    h, n = hashlib.sha256(), 0

    def _get():
        nonlocal n
        with fs.open_input_stream(key) as src, open(tmp, "wb") as dst:
            while chunk := src.read(1 << 20):
                h.update(chunk)
                n += len(chunk)
                dst.write(chunk)
    try:
        _call(uri, _get)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return h.hexdigest(), n


def put_via_temp(uri: str, data: bytes, tmp_name: str) -> None:
    """Upload under a temporary key beside `uri`, then move it into place."""
    fs, path = resolve(uri)
    tmp = path.rsplit("/", 1)[0] + "/" + tmp_name
    write_bytes(uri.rsplit("/", 1)[0] + "/" + tmp_name, data)
    _call(uri, fs.move, tmp, path)


def remove(uri: str, recursive: bool = False) -> None:
    fs, path = resolve(uri)

    def _remove():  # already gone is fine (answered here: _call would turn it into a store error)
        try:
            (fs.delete_dir if recursive else fs.delete_file)(path)
        except FileNotFoundError:
            pass
    _call(uri, _remove)


def sha256(uri: str) -> tuple[str, int]:
    fs, path = resolve(uri)
    h, n = hashlib.sha256(), 0

    def _hash():
        nonlocal n
        with fs.open_input_stream(path) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
    _call(uri, _hash)
    return h.hexdigest(), n


def open_random_access(uri: str):
    fs, path = resolve(uri)
    return _call(uri, fs.open_input_file, path)
