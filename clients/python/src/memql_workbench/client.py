"""``WorkbenchClient``: the sync client of an agent node's HTTP API (``docs/api.md``).

One method per route. Every method raises a :class:`~memql_workbench.errors.WorkbenchError`
of the code's category when the call fails, with two exceptions made for tool loops:
:meth:`WorkbenchClient.dispatch` returns the dispatch result (a refused call is data a
model reads), and so does the :meth:`WorkbenchClient.workbench_host` function. The typed
action methods (``fs_read``, ``exec``, ...) return the action's payload and raise a
refusal. :class:`~memql_workbench.AsyncWorkbenchClient` has the same methods, awaited.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any, cast

import httpx

from . import _routes as routes
from ._contract import TerminalRunStatus
from ._sources import CHUNK_BYTES, DownloadTarget, ProgressListener, UploadSource, sync_source, upload_headers
from ._sync_io import DispatchStream, download, iter_body
from ._transport import DEFAULT_TIMEOUT, SyncTransport
from ._wire import compact, dispatch_result, envelope, json_body, payload_of, query
from .actions import SyncActions
from .errors import error_for
from .events import CommandOutput, DownloadResult
from .processes import ProcessClient
from .tool import WorkbenchHost
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
from .versions import VersionClient
from .views import (
    ConsentRequestView,
    ConsentStatus,
    FleetView,
    ReadyAnswer,
    WorkerInvocationView,
    WorkersAnswer,
)


class WorkbenchClient(SyncActions):
    """A sync client of the agent node's HTTP API; close it (or use ``with``) when done.

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
        http_client: httpx.Client | None = None,
    ) -> None:
        self._http = SyncTransport(base_url, token, timeout, http_client)
        self.base_url = self._http.base_url
        self.agent_id = agent_id
        self.task_id = task_id
        self.processes = ProcessClient(self._http)
        """A run's background processes."""
        self.versions = VersionClient(self._http)
        """A run's workspace history: versions, diffs, checkpoints, restore, fork."""

    @classmethod
    def from_env(cls, **options: Any) -> WorkbenchClient:
        """A client of ``MEMQL_URL`` (default ``http://127.0.0.1:8080``) with ``MEMQL_TOKEN``."""
        token = os.environ.get("MEMQL_TOKEN")
        if not token:
            raise error_for(
                "unauthenticated", "unauthenticated: set MEMQL_TOKEN to the token npm start printed"
            )
        return cls(os.environ.get("MEMQL_URL", "http://127.0.0.1:8080"), token, **options)

    def close(self) -> None:
        """Closes its connections (an ``http_client`` given to it is left open)."""
        self._http.close()

    def __enter__(self) -> WorkbenchClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # The node.

    def health(self) -> dict[str, Any]:
        """Liveness: ``{"ok": True}`` while the node serves (no token needed)."""
        return self._http.call(routes.health())

    def ready(self) -> ReadyAnswer:
        """Readiness: whether the node can serve calls now, and each check (503 answers too)."""
        return self._http.call(routes.ready())

    def me(self) -> MeAnswer:
        """Who the token speaks for: its user, and whether it is an agent or a person token."""
        return self._http.call(routes.me())

    def fleet(self) -> FleetView:
        """The workbench replicas this agent node dispatches to, and the caller's workers."""
        return self._http.call(routes.fleet())

    # Runs.

    def create_run(
        self,
        *,
        conversation_id: str | None = None,
        retention_ms: int | None = None,
        network: RunNetworkRequest | None = None,
    ) -> Run:
        """Creates a run owned by the token's user; ``network``: hosts within the operator's ceiling."""
        return self._http.call(routes.create_run(conversation_id, retention_ms, network))

    def get_run(self, run_id: str) -> Run:
        """One of the caller's runs (``not_found`` for anyone else's)."""
        return self._http.call(routes.get_run(run_id))

    def list_runs(
        self, *, status: RunStatus | None = None, limit: int | None = None, before: str | None = None
    ) -> RunPage:
        """One page of the caller's runs, newest first; page on with ``before=page["nextBefore"]``."""
        return self._http.call(routes.list_runs(status, limit, before))

    def iter_runs(self, *, status: RunStatus | None = None, page_size: int | None = None) -> Iterator[Run]:
        """Every run of the caller's, newest first, a page at a time."""
        before: str | None = None
        while True:
            page = self.list_runs(status=status, limit=page_size, before=before)
            yield from page["runs"]
            before = page["nextBefore"]
            if before is None:
                return

    def end_run(self, run_id: str, status: TerminalRunStatus) -> EndRunAnswer:
        """Moves a run to a terminal status; its workspace is released."""
        return self._http.call(routes.end_run(run_id, status))

    def delete_run(self, run_id: str) -> DeletedCounts:
        """Deletes a run and everything it left: objects, commands, workspaces, artifacts."""
        return self._http.call(routes.delete_run(run_id))

    def set_run_network(self, run_id: str, allow: list[str], *, secrets: list[str] | None = None) -> Run:
        """Replaces a run's network (``allow=[]`` takes it away); beyond the operator's ceiling it is
        refused (``egress_not_allowed``) and nothing changes."""
        return self._http.call(routes.set_run_network(run_id, allow, secrets))

    # Tokens.

    def list_tokens(self) -> list[TokenRecord]:
        """The caller's own tokens, never a secret."""
        return self._http.call(routes.list_tokens())

    def revoke_token(self, token_id: str) -> RevokeAnswer:
        """Revokes one of the caller's tokens (a person token only: ``person_required`` otherwise)."""
        return self._http.call(routes.revoke_token(token_id))

    # Dispatch: every action, as a tool loop calls it.

    def dispatch(
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
        return self._http.call(routes.dispatch(request, cancel_on_disconnect))

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
    ) -> DispatchStream:
        """As :meth:`dispatch`, with an ``exec``'s output as it comes: iterate the stream."""
        request = envelope(
            run_id, action, args, agent_id or self.agent_id, task_id or self.task_id, call_id, environment
        )
        q = query(cancelOnDisconnect=True) if cancel_on_disconnect else {}
        return DispatchStream(lambda: self._http.stream("POST", "/v1/dispatch/stream", q, json=request))

    def workbench_host(
        self, run_id: str, *, agent_id: str | None = None, task_id: str = "tool-loop"
    ) -> WorkbenchHost:
        """The one tool of a tool loop, bound to a run (see :class:`~memql_workbench.WorkbenchHost`)."""
        return WorkbenchHost(
            lambda request: self._http.call(routes.dispatch(request, False)),
            run_id,
            agent_id or self.agent_id,
            task_id,
        )

    def _act(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> Any:
        result = self.dispatch(
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
    ) -> DispatchStream:
        return self.dispatch_stream(
            run_id,
            action,
            args,
            call_id=call_id,
            environment=environment,
            cancel_on_disconnect=cancel_on_disconnect,
        )

    # Large files: the byte-stream routes.

    def upload_file(
        self,
        run_id: str,
        path: str,
        source: UploadSource,
        *,
        mode: str | None = None,
        size: int | None = None,
        chunk_size: int = CHUNK_BYTES,
    ) -> FsWritePayload:
        """Writes a workspace file from bytes, a ``pathlib.Path``, a binary file or an iterable
        of chunks, read ``chunk_size`` at a time (up to 4 GiB and the workspace's quota). The
        file appears at ``path`` whole, once durable, or not at all."""
        content, known = sync_source(source, size, chunk_size)
        route, q = routes.file_route(run_id, path)
        params = {**self._file_params(q), **compact(mode=mode)}
        with self._http.stream(
            "PUT", route, params, content=content, headers=upload_headers(known)
        ) as response:
            body = response.read()
        return cast(FsWritePayload, payload_of(dispatch_result(json_body(body))))

    def download_file(
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
        return download(opener, to, on_progress, f'"{path}" of run {run_id}', chunk_size)

    def iter_file(self, run_id: str, path: str, *, chunk_size: int = CHUNK_BYTES) -> Iterator[bytes]:
        """A workspace file's bytes, ``chunk_size`` at a time."""
        route, q = routes.file_route(run_id, path)
        opener = lambda: self._http.stream("GET", route, self._file_params(q))  # noqa: E731
        return iter_body(opener, f'"{path}" of run {run_id}', chunk_size)

    def _file_params(self, q: dict[str, str]) -> dict[str, str]:
        # The calls a file route makes are recorded with these, as a dispatch's are.
        return {**q, "agentId": self.agent_id, "taskId": self.task_id}

    # Commands: by id, and by the callId of the call that queued them.

    def list_commands(
        self,
        run_id: str,
        *,
        status: CommandStatus | None = None,
        limit: int | None = None,
        before: str | None = None,
    ) -> CommandPage:
        """One page of a run's commands, newest first, without output."""
        return self._http.call(routes.list_commands(run_id, status, limit, before))

    def iter_commands(
        self, run_id: str, *, status: CommandStatus | None = None
    ) -> Iterator[CommandSummaryRecord]:
        """Every command of a run, newest first, a page at a time."""
        before: str | None = None
        while True:
            page = self.list_commands(run_id, status=status, before=before)
            yield from page["commands"]
            before = page["nextBefore"]
            if before is None:
                return

    def get_command(self, command_id: str) -> CommandRecord:
        """A command by id: how it ended, and its output."""
        return self._http.call(routes.get_command(command_id))

    def find_command(self, run_id: str, call_id: str) -> CommandRecord:
        """The command the call with key ``call_id`` queued in the run, whole (``not_found`` if none)."""
        return self._http.call(routes.call_command(run_id, call_id))

    def command_output(self, command_id: str) -> CommandOutput:
        """A command's output as bytes."""
        return CommandOutput.of(self.get_command(command_id))

    def cancel_command(self, command_id: str) -> CancelAnswer:
        """Cancels a command: a queued one ends now, a running one is killed (``effect`` says which)."""
        return self._http.call(routes.cancel_command(command_id))

    def cancel_call(self, run_id: str, call_id: str) -> CancelAnswer:
        """Cancels the command the call with key ``call_id`` queued in the run."""
        return self._http.call(routes.cancel_call(run_id, call_id))

    # Workspaces and artifacts.

    def list_workspaces(
        self, *, include_released: bool = False, limit: int | None = None, before: str | None = None
    ) -> WorkspacePage:
        """One page of the caller's workspaces, newest first; live ones unless ``include_released``."""
        return self._http.call(routes.list_workspaces(include_released, limit, before))

    def list_artifacts(self, run_id: str | None = None) -> list[ArtifactRecord]:
        """The caller's promoted artifacts, newest first; of one run when ``run_id`` is given."""
        return self._http.call(routes.list_artifacts(run_id))

    def get_artifact(self, artifact_id: str) -> ArtifactRecord:
        """One of the caller's artifacts."""
        return self._http.call(routes.get_artifact(artifact_id))

    def download_artifact(
        self,
        artifact_id: str,
        to: DownloadTarget,
        *,
        on_progress: ProgressListener | None = None,
        chunk_size: int = CHUNK_BYTES,
    ) -> DownloadResult:
        """Writes an artifact's bytes to ``to`` without holding them; compare ``sha256`` with its record."""
        path = routes.artifact_content(artifact_id)
        return download(
            lambda: self._http.stream("GET", path, {}), to, on_progress, f"artifact {artifact_id}", chunk_size
        )

    def iter_artifact(self, artifact_id: str, *, chunk_size: int = CHUNK_BYTES) -> Iterator[bytes]:
        """An artifact's bytes, ``chunk_size`` at a time."""
        path = routes.artifact_content(artifact_id)
        return iter_body(lambda: self._http.stream("GET", path, {}), f"artifact {artifact_id}", chunk_size)

    # Worker hosts and consent: reads.

    def list_workers(self) -> WorkersAnswer:
        """The caller's worker hosts, each with its standing scope, and the user-wide kill switch."""
        return self._http.call(routes.list_workers())

    def list_consent_requests(
        self, *, status: ConsentStatus | None = None, limit: int | None = None
    ) -> list[ConsentRequestView]:
        """The caller's consent requests, newest first; pending ones unless ``status`` says otherwise."""
        return self._http.call(routes.list_consent_requests(status, limit))

    def list_worker_invocations(
        self, *, run_id: str | None = None, worker_id: str | None = None, limit: int | None = None
    ) -> list[WorkerInvocationView]:
        """Routing records of calls sent to the caller's workers, newest first."""
        return self._http.call(routes.list_worker_invocations(run_id, worker_id, limit))

    def get_worker_invocation(self, invocation_id: str) -> WorkerInvocationView:
        """One routing record."""
        return self._http.call(routes.get_worker_invocation(invocation_id))

    def list_audit(
        self,
        *,
        run_id: str | None = None,
        type_prefix: str | None = None,
        before: int | None = None,
        limit: int | None = None,
    ) -> AuditPage:
        """One page of the caller's audit events, newest first (never command text or contents)."""
        return self._http.call(routes.list_audit(run_id, type_prefix, before, limit))
