"""Where an upload's bytes come from and a download's go, read and written a chunk at a time.

An upload source is bytes, a file path (``pathlib.Path``), a binary file object, or an
iterable of byte chunks (an async iterable too, for the async client); a download goes
to a file path (created or replaced; removed again when the download fails) or to a
binary file object (left open). Nothing holds a whole file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, Protocol

from .errors import CallerError, DependencyError
from .events import DownloadResult

CHUNK_BYTES = 1024 * 1024
"""Bytes read from a source, or written to a sink, at a time."""


class BinaryReader(Protocol):
    """A binary file open for reading: ``open(path, "rb")``, ``io.BytesIO``, a socket's file."""

    def read(self, size: int = ..., /) -> bytes: ...


class BinaryWriter(Protocol):
    """A binary file open for writing: ``open(path, "wb")``, ``io.BytesIO``, ``sys.stdout.buffer``."""

    def write(self, data: bytes, /) -> object: ...


UploadSource = bytes | os.PathLike[str] | BinaryReader | Iterable[bytes]
"""What the sync client uploads from."""

AsyncUploadSource = UploadSource | AsyncIterable[bytes]
"""What the async client uploads from."""

DownloadTarget = str | os.PathLike[str] | BinaryWriter
"""Where a download goes: a file path (created or replaced), or a binary file object."""

ProgressListener = Callable[[int, int | None], None]
"""Called as bytes move: bytes so far, and the total when known."""


def _size_of(file: Any) -> int | None:
    """Bytes left to read in ``file`` when it is seekable (a regular file, ``io.BytesIO``)."""
    try:
        if file.seekable():
            here: int = file.tell()
            end: int = file.seek(0, os.SEEK_END)
            file.seek(here)
            return end - here
    except (OSError, AttributeError, ValueError):
        pass
    return None


def _read_file(file: Any, chunk: int, close: bool) -> Iterator[bytes]:
    try:
        while True:
            data = file.read(chunk)
            if not data:
                return
            yield data
    finally:
        if close:
            file.close()


def sync_source(source: UploadSource, size: int | None, chunk: int) -> tuple[Any, int | None]:
    """The request content for ``source`` (bytes or an iterator of chunks), and its size when known."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), len(source)
    if isinstance(source, str):
        raise TypeError("upload a file by pathlib.Path(path) or open(path, 'rb'), or text as bytes")
    if isinstance(source, os.PathLike):
        file = open(source, "rb")  # noqa: SIM115 - closed by the generator
        return _read_file(file, chunk, True), os.fstat(file.fileno()).st_size
    if hasattr(source, "read"):
        known = _size_of(source) if size is None else size
        return _read_file(source, chunk, False), known
    if isinstance(source, Iterable):
        return iter(source), size
    raise TypeError(f"cannot upload from {type(source).__name__}")


async def _to_async(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for data in chunks:
        yield data


def async_source(source: AsyncUploadSource, size: int | None, chunk: int) -> tuple[Any, int | None]:
    """As :func:`sync_source`, for the async client: content is bytes or an async iterator."""
    if isinstance(source, AsyncIterable):
        return source, size
    content, known = sync_source(source, size, chunk)
    return (content if isinstance(content, bytes) else _to_async(content)), known


def upload_headers(size: int | None) -> dict[str, str]:
    """The headers of an upload: the bytes' type, and their length when known (else chunked)."""
    headers = {"content-type": "application/octet-stream"}
    if size is not None:
        headers["content-length"] = str(size)
    return headers


def content_length(headers: Any) -> int | None:
    """``Content-Length`` as a number, or None."""
    value = headers.get("content-length")
    return int(value) if isinstance(value, str) and value.isdigit() else None


class Sink:
    """A download's destination: writes chunks, hashes and counts them, and tidies a failure."""

    def __init__(self, to: DownloadTarget, total: int | None, on_progress: ProgressListener | None):
        self._path: str | None = None
        if isinstance(to, (str, os.PathLike)):
            self._path = os.fspath(to)
            self._file: Any = open(self._path, "wb")  # noqa: SIM115 - closed by finish/fail
        elif hasattr(to, "write"):
            self._file = to
        else:
            raise CallerError("invalid_arguments", "invalid_arguments: to: expected a path or a binary file")
        self._hash = hashlib.sha256()
        self.received = 0
        self.total = total
        self._on_progress = on_progress

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self._hash.update(data)
        self.received += len(data)
        if self._on_progress is not None:
            self._on_progress(self.received, self.total)

    def finish(self, what: str) -> DownloadResult:
        """Closes a file it opened; a body short of (or past) its length is ``unavailable``."""
        if self.total is not None and self.received != self.total:
            self.fail()
            raise DependencyError(
                "unavailable",
                f"unavailable: {what} arrived with {self.received} of {self.total} bytes; read it again",
            )
        if self._path is not None:
            self._file.close()
        return DownloadResult(self.received, self._hash.hexdigest())

    def fail(self) -> None:
        """Removes the partial file it made; a file object given is left as it is."""
        if self._path is not None:
            self._file.close()
            with contextlib.suppress(OSError):
                os.remove(self._path)


def check_length(received: int, total: int | None, what: str) -> None:
    """Raises ``unavailable`` when a streamed body did not match its ``Content-Length``."""
    if total is not None and received != total:
        raise DependencyError(
            "unavailable", f"unavailable: {what} arrived with {received} of {total} bytes; read it again"
        )
