"""The async client's streamed answers: dispatch streams, followed processes, uploads, downloads."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
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

AsyncOpener = Callable[[], AbstractAsyncContextManager[httpx.Response]]
FollowOpener = Callable[[int, int], AbstractAsyncContextManager[httpx.Response]]


async def _lines(response: httpx.Response, what: str) -> AsyncIterator[bytes]:
    splitter = NdjsonSplitter()
    try:
        async for chunk in response.aiter_bytes():
            for line in splitter.push(chunk):
                yield line
    except (httpx.TransportError, httpx.StreamError) as err:
        raise cut(what, err) from err
    for line in splitter.end():
        yield line


class AsyncDispatchStream:
    """A streaming dispatch: ``async for`` gives :class:`OutputChunk` items as the command
    writes, then one :class:`StreamResult`. The request is sent on first use; ``aclose()``
    (or leaving an ``async with`` block) closes the connection, and the command goes on
    unless the call asked ``cancel_on_disconnect``.
    """

    def __init__(self, opener: AsyncOpener) -> None:
        self._events = self._read(opener)
        self.result: DispatchResult | None = None
        """The dispatch result, once the stream has given it."""

    async def _read(self, opener: AsyncOpener) -> AsyncGenerator[StreamEvent, None]:
        async with opener() as response:
            async for line in _lines(response, "the dispatch stream"):
                event = dispatch_event(line)
                if isinstance(event, StreamResult):
                    self.result = event.result
                yield event
        if self.result is None:
            raise cut_short("the dispatch stream")

    def __aiter__(self) -> AsyncDispatchStream:
        return self

    async def __anext__(self) -> StreamEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Closes the connection (the command goes on unless it was to be cancelled)."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncDispatchStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def wait(self) -> DispatchResult:
        """Reads the rest of the stream (dropping output) and returns the result."""
        async for _ in self:
            pass
        if self.result is None:  # pragma: no cover - _read raises first
            raise cut_short("the dispatch stream")
        return self.result

    async def payload(self) -> Any:
        """The result's payload once it came; a failed result is raised as its error."""
        return payload_of(await self.wait())


class AsyncProcessFollow:
    """A followed process: :class:`FollowedOutput` items as it writes, then one
    :class:`ProcessEnded`; ``stdout_offset`` and ``stderr_offset`` are the offsets reached.
    """

    def __init__(self, opener: FollowOpener, stdout_offset: int, stderr_offset: int) -> None:
        self.stdout_offset = stdout_offset
        self.stderr_offset = stderr_offset
        self.process: ProcessView | None = None
        """The process as it ended, once the follow has given it."""
        self._events = self._read(opener)

    async def _read(self, opener: FollowOpener) -> AsyncGenerator[FollowEvent, None]:
        async with opener(self.stdout_offset, self.stderr_offset) as response:
            async for line in _lines(response, "the process follow"):
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

    def __aiter__(self) -> AsyncProcessFollow:
        return self

    async def __anext__(self) -> FollowEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stops following (the process goes on)."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncProcessFollow:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def aiter_body(opener: AsyncOpener, what: str, chunk_size: int = CHUNK_BYTES) -> AsyncIterator[bytes]:
    """A streamed body's chunks; one short of its ``Content-Length`` ends in ``unavailable``."""
    async with opener() as response:
        total = content_length(response.headers)
        received = 0
        try:
            async for data in response.aiter_bytes(chunk_size):
                received += len(data)
                yield data
        except (httpx.TransportError, httpx.StreamError) as err:
            raise cut(what, err) from err
        check_length(received, total, what)


async def download(
    opener: AsyncOpener, to: DownloadTarget, on_progress: ProgressListener | None, what: str, chunk_size: int
) -> DownloadResult:
    """Writes a streamed body to ``to`` without holding it; a failure removes a partial file."""
    async with opener() as response:
        sink = Sink(to, content_length(response.headers), on_progress)
        try:
            async for data in response.aiter_bytes(chunk_size):
                sink.write(data)
        except (httpx.TransportError, httpx.StreamError) as err:
            sink.fail()
            raise cut(what, err) from err
        except BaseException:
            sink.fail()
            raise
        return sink.finish(what)
