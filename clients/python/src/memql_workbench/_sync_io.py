"""The sync client's streamed answers: dispatch streams, followed processes, uploads, downloads."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

import httpx

from ._ndjson import NdjsonSplitter, cut_short, dispatch_event, follow_event
from ._sources import CHUNK_BYTES, DownloadTarget, ProgressListener, Sink, check_length, content_length
from ._transport import cut
from ._wire import payload_of
from .events import DownloadResult, FollowedOutput, FollowEvent, ProcessEnded, StreamEvent, StreamResult
from .types import DispatchResult
from .views import ProcessView

Opener = Callable[[], AbstractContextManager[httpx.Response]]


def _lines(response: httpx.Response, what: str) -> Iterator[bytes]:
    splitter = NdjsonSplitter()
    try:
        for chunk in response.iter_bytes():
            yield from splitter.push(chunk)
    except (httpx.TransportError, httpx.StreamError) as err:
        raise cut(what, err) from err
    yield from splitter.end()


class DispatchStream:
    """A streaming dispatch: iterate for :class:`OutputChunk` items as the command writes,
    then one :class:`StreamResult`. The request is sent on first use; ``close()`` (or
    leaving a ``with`` block) closes the connection, and the command goes on unless the
    call asked ``cancel_on_disconnect``.
    """

    def __init__(self, opener: Opener) -> None:
        self._events = self._read(opener)
        self.result: DispatchResult | None = None
        """The dispatch result, once the stream has given it."""

    def _read(self, opener: Opener) -> Generator[StreamEvent, None, None]:
        with opener() as response:
            for line in _lines(response, "the dispatch stream"):
                event = dispatch_event(line)
                if isinstance(event, StreamResult):
                    self.result = event.result
                yield event
        if self.result is None:
            raise cut_short("the dispatch stream")

    def __iter__(self) -> DispatchStream:
        return self

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def close(self) -> None:
        """Closes the connection (the command goes on unless it was to be cancelled)."""
        self._events.close()

    def __enter__(self) -> DispatchStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def wait(self) -> DispatchResult:
        """Reads the rest of the stream (dropping output) and returns the result."""
        for _ in self:
            pass
        if self.result is None:  # pragma: no cover - _read raises first
            raise cut_short("the dispatch stream")
        return self.result

    def payload(self) -> Any:
        """The result's payload once it came; a failed result is raised as its error."""
        return payload_of(self.wait())


class ProcessFollow:
    """A followed process: :class:`FollowedOutput` items as it writes, then one
    :class:`ProcessEnded`. ``stdout_offset`` and ``stderr_offset`` are the offsets reached:
    follow again from them to re-attach after a broken connection.
    """

    def __init__(
        self,
        opener: Callable[[int, int], AbstractContextManager[httpx.Response]],
        stdout_offset: int,
        stderr_offset: int,
    ) -> None:
        self.stdout_offset = stdout_offset
        self.stderr_offset = stderr_offset
        self.process: ProcessView | None = None
        """The process as it ended, once the follow has given it."""
        self._events = self._read(opener)

    def _read(
        self, opener: Callable[[int, int], AbstractContextManager[httpx.Response]]
    ) -> Generator[FollowEvent, None, None]:
        with opener(self.stdout_offset, self.stderr_offset) as response:
            for line in _lines(response, "the process follow"):
                event = follow_event(line)
                if isinstance(event, FollowedOutput):
                    end = event.offset + len(event.data)
                    if event.stream == "stdout":
                        self.stdout_offset = end
                    else:
                        self.stderr_offset = end
                elif isinstance(event, ProcessEnded):
                    self.process = event.process
                yield event
                if isinstance(event, ProcessEnded):
                    return
        raise cut_short("the process follow")

    def __iter__(self) -> ProcessFollow:
        return self

    def __next__(self) -> FollowEvent:
        return next(self._events)

    def close(self) -> None:
        """Stops following (the process goes on)."""
        self._events.close()

    def __enter__(self) -> ProcessFollow:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def iter_body(opener: Opener, what: str, chunk_size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """A streamed body's chunks; one short of its ``Content-Length`` ends in ``unavailable``."""
    with opener() as response:
        total = content_length(response.headers)
        received = 0
        try:
            for data in response.iter_bytes(chunk_size):
                received += len(data)
                yield data
        except (httpx.TransportError, httpx.StreamError) as err:
            raise cut(what, err) from err
        check_length(received, total, what)


def download(
    opener: Opener, to: DownloadTarget, on_progress: ProgressListener | None, what: str, chunk_size: int
) -> DownloadResult:
    """Writes a streamed body to ``to`` without holding it; a failure removes a partial file."""
    with opener() as response:
        sink = Sink(to, content_length(response.headers), on_progress)
        try:
            for data in response.iter_bytes(chunk_size):
                sink.write(data)
        except (httpx.TransportError, httpx.StreamError) as err:
            sink.fail()
            raise cut(what, err) from err
        except BaseException:
            sink.fail()
            raise
        return sink.finish(what)
