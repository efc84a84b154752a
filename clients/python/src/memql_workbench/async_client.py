"""``AsyncWorkbenchClient``: the async client of an agent node's HTTP API (``docs/api.md``).

The same methods as :class:`~memql_workbench.WorkbenchClient`, awaited; the streams
(``dispatch_stream``, ``exec_stream``, ``processes.follow``) and the byte iterators
(``iter_file``, ``iter_artifact``, ``iter_runs``, ``iter_commands``) are read with
``async for``, and ``aclose()`` closes it (or use ``async with``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, cast

import httpx

from . import _routes as routes
from ._async_io import AsyncDispatchStream, aiter_body, download
from ._contract import TerminalRunStatus
from ._sources import (
    CHUNK_BYTES,
    AsyncUploadSource,
    DownloadTarget,
    ProgressListener,
    async_source,
    upload_headers,
)
from ._transport import DEFAULT_TIMEOUT, AsyncTransport
from ._wire import compact, dispatch_result, envelope, json_body, payload_of, query
from .actions import AsyncActions
from .errors import error_for
from .events import CommandOutput, DownloadResult
from .processes import AsyncProcessClient
from .tool import AsyncWorkbenchHost
from .types import (
    ArtifactRecord,
    AuditPage,
    CancelAnswer,
    CommandPage,
    CommandRecord,
    CommandStatus,
    CommandSummaryRecord,
    DeletedCounts,
    DispatchResult,
    EndRunAnswer,
    EnvironmentHint,
    FsWritePayload,
    MeAnswer,
    RevokeAnswer,
    Run,
    RunNetworkRequest,
    RunPage,
    RunStatus,
    TokenRecord,
    WorkspacePage,
)
from .versions import AsyncVersionClient
from .views import (
    ConsentRequestView,
    ConsentStatus,
    FleetView,
    ReadyAnswer,
    WorkerInvocationView,
    WorkersAnswer,
)


class AsyncWorkbenchClient(AsyncActions):
    """An async client of the agent node's HTTP API; ``aclose()`` it (or use ``async with``) when done.

    ``agent_id`` and ``task_id`` are recorded with every call it dispatches (audit events,
    logs); each call may name others.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        agent_id: str = "python-sdk",
        task_id: str = "sdk",
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = AsyncTransport(base_url, token, timeout, http_client)
        self.base_url = self._http.base_url
        self.agent_id = agent_id
        self.task_id = task_id
        self.processes = AsyncProcessClient(self._http)
        """A run's background processes."""
        self.versions = AsyncVersionClient(self._http)
        """A run's workspace history: versions, diffs, checkpoints, restore, fork."""

    @classmethod
    def from_env(cls, **options: Any) -> AsyncWorkbenchClient:
        """A client of ``MEMQL_URL`` (default ``http://127.0.0.1:8080``) with ``MEMQL_TOKEN``."""
        token = os.environ.get("MEMQL_TOKEN")
        if not token:
            raise error_for(
                "unauthenticated", "unauthenticated: set MEMQL_TOKEN to the token npm start printed"
            )
        return cls(os.environ.get("MEMQL_URL", "http://127.0.0.1:8080"), token, **options)

    async def aclose(self) -> None:
        """Closes its connections (an ``http_client`` given to it is left open)."""
        await self._http.close()

    async def __aenter__(self) -> AsyncWorkbenchClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # The node.

    async def health(self) -> dict[str, Any]:
        """Liveness: ``{"ok": True}`` while the node serves (no token needed)."""
        return await self._http.call(routes.health())

    async def ready(self) -> ReadyAnswer:
        """Readiness: whether the node can serve calls now, and each check (503 answers too)."""
        return await self._http.call(routes.ready())

    async def me(self) -> MeAnswer:
        """Who the token speaks for: its user, and whether it is an agent or a person token."""
        return await self._http.call(routes.me())

    async def fleet(self) -> FleetView:
        """The workbench replicas this agent node dispatches to, and the caller's workers."""
        return await self._http.call(routes.fleet())

    # Runs.

    async def create_run(
        self,
        *,
        conversation_id: str | None = None,
        retention_ms: int | None = None,
        network: RunNetworkRequest | None = None,
    ) -> Run:
        """Creates a run owned by the token's user; ``network``: hosts within the operator's ceiling."""
        return await self._http.call(routes.create_run(conversation_id, retention_ms, network))

    async def get_run(self, run_id: str) -> Run:
        """One of the caller's runs (``not_found`` for anyone else's)."""
        return await self._http.call(routes.get_run(run_id))

    async def list_runs(
        self, *, status: RunStatus | None = None, limit: int | None = None, before: str | None = None
    ) -> RunPage:
        """One page of the caller's runs, newest first; page on with ``before=page["nextBefore"]``."""
        return await self._http.call(routes.list_runs(status, limit, before))

    async def iter_runs(
        self, *, status: RunStatus | None = None, page_size: int | None = None
    ) -> AsyncIterator[Run]:
        """Every run of the caller's, newest first, a page at a time."""
        before: str | None = None
        while True:
            page = await self.list_runs(status=status, limit=page_size, before=before)
            for run in page["runs"]:
                yield run
            before = page["nextBefore"]
            if before is None:
                return

    async def end_run(self, run_id: str, status: TerminalRunStatus) -> EndRunAnswer:
        """Moves a run to a terminal status; its workspace is released."""
        return await self._http.call(routes.end_run(run_id, status))

    async def delete_run(self, run_id: str) -> DeletedCounts:
        """Deletes a run and everything it left: objects, commands, workspaces, artifacts."""
        return await self._http.call(routes.delete_run(run_id))

    async def set_run_network(
        self, run_id: str, allow: list[str], *, secrets: list[str] | None = None
    ) -> Run:
        """Replaces a run's network (``allow=[]`` takes it away); beyond the operator's ceiling it is
        refused (``egress_not_allowed``) and nothing changes."""
        return await self._http.call(routes.set_run_network(run_id, allow, secrets))

    # Tokens.

    async def list_tokens(self) -> list[TokenRecord]:
        """The caller's own tokens, never a secret."""
        return await self._http.call(routes.list_tokens())

    async def revoke_token(self, token_id: str) -> RevokeAnswer:
        """Revokes one of the caller's tokens (a person token only: ``person_required`` otherwise)."""
        return await self._http.call(routes.revoke_token(token_id))

    # Dispatch: every action, as a tool loop calls it.

    async def dispatch(
        self,
        run_id: str,
        action: str,
        args: Any,
        *,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        agent_id: str | None = None,
        task_id: str | None = None,
        cancel_on_disconnect: bool = False,
    ) -> DispatchResult:
        """Sends one ``workbenchHost`` call and returns its result, refused or not. A ``call_id``
        names the call: repeated with the same action and args it answers the recorded outcome."""
        request = envelope(
            run_id, action, args, agent_id or self.agent_id, task_id or self.task_id, call_id, environment
        )
        return await self._http.call(routes.dispatch(request, cancel_on_disconnect))

    def dispatch_stream(
        self,
        run_id: str,
        action: str,
        args: Any,
        *,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        agent_id: str | None = None,
        task_id: str | None = None,
        cancel_on_disconnect: bool = False,
    ) -> AsyncDispatchStream:
        """As :meth:`dispatch`, with an ``exec``'s output as it comes: ``async for`` the stream."""
        request = envelope(
            run_id, action, args, agent_id or self.agent_id, task_id or self.task_id, call_id, environment
        )
        q = query(cancelOnDisconnect=True) if cancel_on_disconnect else {}
        return AsyncDispatchStream(lambda: self._http.stream("POST", "/v1/dispatch/stream", q, json=request))

    def workbench_host(
        self, run_id: str, *, agent_id: str | None = None, task_id: str = "tool-loop"
    ) -> AsyncWorkbenchHost:
        """The one tool of a tool loop, bound to a run (see :class:`~memql_workbench.AsyncWorkbenchHost`)."""
        return AsyncWorkbenchHost(
            lambda request: self._http.call(routes.dispatch(request, False)),
            run_id,
            agent_id or self.agent_id,
            task_id,
        )

    async def _act(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> Any:
        result = await self.dispatch(
            run_id,
            action,
            args,
            call_id=call_id,
            environment=environment,
            cancel_on_disconnect=cancel_on_disconnect,
        )
        return payload_of(result)

    def _stream(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None,
        cancel_on_disconnect: bool,
    ) -> AsyncDispatchStream:
        return self.dispatch_stream(
            run_id,
            action,
            args,
            call_id=call_id,
            environment=environment,
            cancel_on_disconnect=cancel_on_disconnect,
        )

    # Large files: the byte-stream routes.

    async def upload_file(
        self,
        run_id: str,
        path: str,
        source: AsyncUploadSource,
        *,
        mode: str | None = None,
        size: int | None = None,
        chunk_size: int = CHUNK_BYTES,
    ) -> FsWritePayload:
        """Writes a workspace file from bytes, a ``pathlib.Path``, a binary file or an iterable
        of chunks (sync or async), read ``chunk_size`` at a time (up to 4 GiB and the
        workspace's quota). The file appears at ``path`` whole, once durable, or not at all."""
        content, known = async_source(source, size, chunk_size)
        route, q = routes.file_route(run_id, path)
        params = {**self._file_params(q), **compact(mode=mode)}
        async with self._http.stream(
            "PUT", route, params, content=content, headers=upload_headers(known)
        ) as response:
            body = await response.aread()
        return cast(FsWritePayload, payload_of(dispatch_result(json_body(body))))

    async def download_file(
        self,
        run_id: str,
        path: str,
        to: DownloadTarget,
        *,
        on_progress: ProgressListener | None = None,
        chunk_size: int = CHUNK_BYTES,
    ) -> DownloadResult:
        """Writes a workspace file to ``to`` (a path or a binary file) without holding it; the
        answer has its byte count and SHA-256."""
        route, q = routes.file_route(run_id, path)
        opener = lambda: self._http.stream("GET", route, self._file_params(q))  # noqa: E731
        return await download(opener, to, on_progress, f'"{path}" of run {run_id}', chunk_size)

    def iter_file(self, run_id: str, path: str, *, chunk_size: int = CHUNK_BYTES) -> AsyncIterator[bytes]:
        """A workspace file's bytes, ``chunk_size`` at a time."""
        route, q = routes.file_route(run_id, path)
        opener = lambda: self._http.stream("GET", route, self._file_params(q))  # noqa: E731
        return aiter_body(opener, f'"{path}" of run {run_id}', chunk_size)

    def _file_params(self, q: dict[str, str]) -> dict[str, str]:
        # The calls a file route makes are recorded with these, as a dispatch's are.
        return {**q, "agentId": self.agent_id, "taskId": self.task_id}

    # Commands: by id, and by the callId of the call that queued them.

    async def list_commands(
        self,
        run_id: str,
        *,
        status: CommandStatus | None = None,
        limit: int | None = None,
        before: str | None = None,
    ) -> CommandPage:
        """One page of a run's commands, newest first, without output."""
        return await self._http.call(routes.list_commands(run_id, status, limit, before))

    async def iter_commands(
        self, run_id: str, *, status: CommandStatus | None = None
    ) -> AsyncIterator[CommandSummaryRecord]:
        """Every command of a run, newest first, a page at a time."""
        before: str | None = None
        while True:
            page = await self.list_commands(run_id, status=status, before=before)
            for command in page["commands"]:
                yield command
            before = page["nextBefore"]
            if before is None:
                return

    async def get_command(self, command_id: str) -> CommandRecord:
        """A command by id: how it ended, and its output."""
        return await self._http.call(routes.get_command(command_id))

    async def find_command(self, run_id: str, call_id: str) -> CommandRecord:
        """The command the call with key ``call_id`` queued in the run, whole (``not_found`` if none)."""
        return await self._http.call(routes.call_command(run_id, call_id))

    async def command_output(self, command_id: str) -> CommandOutput:
        """A command's output as bytes."""
        return CommandOutput.of(await self.get_command(command_id))

    async def cancel_command(self, command_id: str) -> CancelAnswer:
        """Cancels a command: a queued one ends now, a running one is killed (``effect`` says which)."""
        return await self._http.call(routes.cancel_command(command_id))

    async def cancel_call(self, run_id: str, call_id: str) -> CancelAnswer:
        """Cancels the command the call with key ``call_id`` queued in the run."""
        return await self._http.call(routes.cancel_call(run_id, call_id))

    # Workspaces and artifacts.

    async def list_workspaces(
        self, *, include_released: bool = False, limit: int | None = None, before: str | None = None
    ) -> WorkspacePage:
        """One page of the caller's workspaces, newest first; live ones unless ``include_released``."""
        return await self._http.call(routes.list_workspaces(include_released, limit, before))

    async def list_artifacts(self, run_id: str | None = None) -> list[ArtifactRecord]:
        """The caller's promoted artifacts, newest first; of one run when ``run_id`` is given."""
        return await self._http.call(routes.list_artifacts(run_id))

    async def get_artifact(self, artifact_id: str) -> ArtifactRecord:
        """One of the caller's artifacts."""
        return await self._http.call(routes.get_artifact(artifact_id))

    async def download_artifact(
        self,
        artifact_id: str,
        to: DownloadTarget,
        *,
        on_progress: ProgressListener | None = None,
        chunk_size: int = CHUNK_BYTES,
    ) -> DownloadResult:
        """Writes an artifact's bytes to ``to`` without holding them; compare ``sha256`` with its record."""
        path = routes.artifact_content(artifact_id)
        opener = lambda: self._http.stream("GET", path, {})  # noqa: E731
        return await download(opener, to, on_progress, f"artifact {artifact_id}", chunk_size)

    def iter_artifact(self, artifact_id: str, *, chunk_size: int = CHUNK_BYTES) -> AsyncIterator[bytes]:
        """An artifact's bytes, ``chunk_size`` at a time."""
        path = routes.artifact_content(artifact_id)
        return aiter_body(lambda: self._http.stream("GET", path, {}), f"artifact {artifact_id}", chunk_size)

    # Worker hosts and consent: reads.

    async def list_workers(self) -> WorkersAnswer:
        """The caller's worker hosts, each with its standing scope, and the user-wide kill switch."""
        return await self._http.call(routes.list_workers())

    async def list_consent_requests(
        self, *, status: ConsentStatus | None = None, limit: int | None = None
    ) -> list[ConsentRequestView]:
        """The caller's consent requests, newest first; pending ones unless ``status`` says otherwise."""
        return await self._http.call(routes.list_consent_requests(status, limit))

    async def list_worker_invocations(
        self, *, run_id: str | None = None, worker_id: str | None = None, limit: int | None = None
    ) -> list[WorkerInvocationView]:
        """Routing records of calls sent to the caller's workers, newest first."""
        return await self._http.call(routes.list_worker_invocations(run_id, worker_id, limit))

    async def get_worker_invocation(self, invocation_id: str) -> WorkerInvocationView:
        """One routing record."""
        return await self._http.call(routes.get_worker_invocation(invocation_id))

    async def list_audit(
        self,
        *,
        run_id: str | None = None,
        type_prefix: str | None = None,
        before: int | None = None,
        limit: int | None = None,
    ) -> AuditPage:
        """One page of the caller's audit events, newest first (never command text or contents)."""
        return await self._http.call(routes.list_audit(run_id, type_prefix, before, limit))
