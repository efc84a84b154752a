"""``client.processes``: a run's background processes (``docs/processes.md``).

A process outlives the call that started it: :meth:`ProcessClient.start` answers at
once, and the others list, read output from a byte offset, write to stdin, signal,
wait and follow. Every method raises the refusal's category error
(``process_not_found``, ``process_not_running``, ``process_limit``, ...).
"""

from __future__ import annotations

from typing import Any, Literal

from . import _routes as routes
from ._async_io import AsyncProcessFollow
from ._contract import ProcessSignal
from ._sync_io import ProcessFollow
from ._transport import AsyncTransport, SyncTransport
from .views import ProcessOutputPayload, ProcessStartPayload, ProcessView, ProcessWriteAnswer, PtySize

Stream = Literal["stdout", "stderr"]
ProcessList = list[ProcessView]
"""The processes of a run (a name, since the clients' ``list`` method hides the built-in)."""


class ProcessClient:
    """A run's background processes, for the sync client."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def start(
        self,
        run_id: str,
        command: str,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        pty: PtySize | None = None,
        call_id: str | None = None,
    ) -> ProcessStartPayload:
        """Starts a background process in the run's sandbox; answers at once. The same
        ``call_id`` and command give the same process again (``replayed``). With ``pty``
        it runs on a terminal of that size."""
        return self._http.call(routes.process_start(run_id, command, cwd, env, pty, call_id))

    def list(self, run_id: str, *, running: bool = False, limit: int | None = None) -> ProcessList:
        """The run's processes, newest first; only running ones with ``running``."""
        return self._http.call(routes.process_list(run_id, running, limit))

    def get(self, run_id: str, process_id: str) -> ProcessView:
        """One process."""
        return self._http.call(routes.process_get(run_id, process_id))

    def output(
        self,
        run_id: str,
        process_id: str,
        *,
        stream: Stream | None = None,
        offset: int | None = None,
        max_bytes: int | None = None,
        encoding: Literal["utf8", "base64"] | None = None,
    ) -> ProcessOutputPayload:
        """A piece of one stream (stdout by default) from ``offset``; read on from its ``next``."""
        return self._http.call(routes.process_output(run_id, process_id, stream, offset, max_bytes, encoding))

    def write(self, run_id: str, process_id: str, stdin: str, *, eof: bool = False) -> ProcessWriteAnswer:
        """Writes to its standard input; ``eof`` closes it after."""
        return self._http.call(routes.process_write(run_id, process_id, stdin, eof))

    def close_input(self, run_id: str, process_id: str) -> ProcessWriteAnswer:
        """Closes its standard input (the end of input)."""
        return self._http.call(routes.process_write(run_id, process_id, None, True))

    def signal(self, run_id: str, process_id: str, signal: ProcessSignal | None = None) -> ProcessView:
        """Sends a signal (``SIGTERM`` by default) to its process group."""
        return self._http.call(routes.process_signal(run_id, process_id, signal))

    def wait(self, run_id: str, process_id: str, timeout_ms: int | None = None) -> ProcessView:
        """Waits up to ``timeout_ms`` (default 30 s) for its end; ``status`` says whether it came."""
        return self._http.call(routes.process_wait(run_id, process_id, timeout_ms))

    def resize(self, run_id: str, process_id: str, cols: int, rows: int) -> ProcessView:
        """Resizes its terminal (a process started with ``pty``)."""
        return self._http.call(routes.process_resize(run_id, process_id, cols, rows))

    def follow(
        self, run_id: str, process_id: str, *, stdout_offset: int = 0, stderr_offset: int = 0
    ) -> ProcessFollow:
        """Follows both streams live from the offsets until the process ends (see :class:`ProcessFollow`)."""

        def opener(stdout: int, stderr: int) -> Any:
            path, query = routes.process_follow(run_id, process_id, stdout, stderr)
            return self._http.stream("GET", path, query)

        return ProcessFollow(opener, stdout_offset, stderr_offset)


class AsyncProcessClient:
    """A run's background processes, for the async client: :class:`ProcessClient`, awaited."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def start(
        self,
        run_id: str,
        command: str,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        pty: PtySize | None = None,
        call_id: str | None = None,
    ) -> ProcessStartPayload:
        """Starts a background process in the run's sandbox; answers at once."""
        return await self._http.call(routes.process_start(run_id, command, cwd, env, pty, call_id))

    async def list(self, run_id: str, *, running: bool = False, limit: int | None = None) -> ProcessList:
        """The run's processes, newest first; only running ones with ``running``."""
        return await self._http.call(routes.process_list(run_id, running, limit))

    async def get(self, run_id: str, process_id: str) -> ProcessView:
        """One process."""
        return await self._http.call(routes.process_get(run_id, process_id))

    async def output(
        self,
        run_id: str,
        process_id: str,
        *,
        stream: Stream | None = None,
        offset: int | None = None,
        max_bytes: int | None = None,
        encoding: Literal["utf8", "base64"] | None = None,
    ) -> ProcessOutputPayload:
        """A piece of one stream (stdout by default) from ``offset``; read on from its ``next``."""
        return await self._http.call(
            routes.process_output(run_id, process_id, stream, offset, max_bytes, encoding)
        )

    async def write(
        self, run_id: str, process_id: str, stdin: str, *, eof: bool = False
    ) -> ProcessWriteAnswer:
        """Writes to its standard input; ``eof`` closes it after."""
        return await self._http.call(routes.process_write(run_id, process_id, stdin, eof))

    async def close_input(self, run_id: str, process_id: str) -> ProcessWriteAnswer:
        """Closes its standard input (the end of input)."""
        return await self._http.call(routes.process_write(run_id, process_id, None, True))

    async def signal(self, run_id: str, process_id: str, signal: ProcessSignal | None = None) -> ProcessView:
        """Sends a signal (``SIGTERM`` by default) to its process group."""
        return await self._http.call(routes.process_signal(run_id, process_id, signal))

    async def wait(self, run_id: str, process_id: str, timeout_ms: int | None = None) -> ProcessView:
        """Waits up to ``timeout_ms`` (default 30 s) for its end; ``status`` says whether it came."""
        return await self._http.call(routes.process_wait(run_id, process_id, timeout_ms))

    async def resize(self, run_id: str, process_id: str, cols: int, rows: int) -> ProcessView:
        """Resizes its terminal (a process started with ``pty``)."""
        return await self._http.call(routes.process_resize(run_id, process_id, cols, rows))

    def follow(
        self, run_id: str, process_id: str, *, stdout_offset: int = 0, stderr_offset: int = 0
    ) -> AsyncProcessFollow:
        """Follows both streams live from the offsets until the process ends; ``async for`` it."""

        def opener(stdout: int, stderr: int) -> Any:
            path, query = routes.process_follow(run_id, process_id, stdout, stderr)
            return self._http.stream("GET", path, query)

        return AsyncProcessFollow(opener, stdout_offset, stderr_offset)
