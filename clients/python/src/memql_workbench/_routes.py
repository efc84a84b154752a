"""Every JSON route the SDK calls, as a :class:`Call`: the sync and async clients send these.

One function per route; the route table is ``docs/api.md``, ``docs/processes.md`` and
``docs/versions.md``.
"""

from __future__ import annotations

from typing import Any

from ._contract import ProcessSignal, TerminalRunStatus
from ._wire import MAX_PATH_CHARS, Call, checked, compact, dispatch_result, key, query, seg
from .types import (
    ArtifactRecord,
    AuditPage,
    CancelAnswer,
    CommandPage,
    CommandRecord,
    CommandStatus,
    DeletedCounts,
    DispatchResult,
    EndRunAnswer,
    MeAnswer,
    RevokeAnswer,
    Run,
    RunNetworkRequest,
    RunPage,
    RunStatus,
    TokenRecord,
    WorkspacePage,
)
from .views import (
    ConsentRequestView,
    ConsentStatus,
    FleetView,
    ForkAnswer,
    ManifestPage,
    ProcessOutputPayload,
    ProcessStartPayload,
    ProcessView,
    ProcessWriteAnswer,
    PtySize,
    ReadyAnswer,
    VersionDiffPayload,
    VersionListPayload,
    VersionRestorePayload,
    VersionView,
    WorkerInvocationView,
    WorkersAnswer,
)


def _run(run_id: str, tail: str = "") -> str:
    return f"/v1/runs/{seg('runId', run_id)}{tail}"


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/healthz")


def ready() -> Call[ReadyAnswer]:
    return Call("GET", "/readyz", ok_statuses=frozenset({503}))


def me() -> Call[MeAnswer]:
    return Call("GET", "/v1/me")


def create_run(
    conversation_id: str | None, retention_ms: int | None, network: RunNetworkRequest | None
) -> Call[Run]:
    body = compact(conversationId=conversation_id, retentionMs=retention_ms, network=network)
    return Call("POST", "/v1/runs", body=body, parse=key("run"))


def get_run(run_id: str) -> Call[Run]:
    return Call("GET", _run(run_id), parse=key("run"))


def list_runs(status: RunStatus | None, limit: int | None, before: str | None) -> Call[RunPage]:
    if before is not None:
        checked("before", before)
    return Call("GET", "/v1/runs", query(status=status, limit=limit, before=before))


def end_run(run_id: str, status: TerminalRunStatus) -> Call[EndRunAnswer]:
    return Call("POST", _run(run_id, "/end"), body={"status": status})


def delete_run(run_id: str) -> Call[DeletedCounts]:
    return Call("DELETE", _run(run_id), parse=key("deleted"))


def set_run_network(run_id: str, allow: list[str], secrets: list[str] | None) -> Call[Run]:
    body = compact(allow=allow, secrets=secrets)
    return Call("PUT", _run(run_id, "/network"), body=body, parse=key("run"))


def list_tokens() -> Call[list[TokenRecord]]:
    return Call("GET", "/v1/tokens", parse=key("tokens"))


def revoke_token(token_id: str) -> Call[RevokeAnswer]:
    return Call("DELETE", f"/v1/tokens/{seg('tokenId', token_id)}")


def dispatch(envelope: dict[str, Any], cancel_on_disconnect: bool) -> Call[DispatchResult]:
    q = query(cancelOnDisconnect=True) if cancel_on_disconnect else {}
    return Call("POST", "/v1/dispatch", q, body=envelope, parse=dispatch_result)


def list_commands(
    run_id: str, status: CommandStatus | None, limit: int | None, before: str | None
) -> Call[CommandPage]:
    if before is not None:
        checked("before", before)
    return Call("GET", _run(run_id, "/commands"), query(status=status, limit=limit, before=before))


def get_command(command_id: str) -> Call[CommandRecord]:
    return Call("GET", f"/v1/commands/{seg('commandId', command_id)}", parse=key("command"))


def call_command(run_id: str, call_id: str) -> Call[CommandRecord]:
    return Call("GET", _run(run_id, f"/calls/{seg('callId', call_id)}"), parse=key("command"))


def cancel_command(command_id: str) -> Call[CancelAnswer]:
    return Call("POST", f"/v1/commands/{seg('commandId', command_id)}/cancel", body={})


def cancel_call(run_id: str, call_id: str) -> Call[CancelAnswer]:
    return Call("POST", _run(run_id, f"/calls/{seg('callId', call_id)}/cancel"), body={})


def list_workspaces(include_released: bool, limit: int | None, before: str | None) -> Call[WorkspacePage]:
    q = query(includeReleased=True if include_released else None, limit=limit, before=before)
    return Call("GET", "/v1/workspaces", q)


def list_artifacts(run_id: str | None) -> Call[list[ArtifactRecord]]:
    q = query(runId=None if run_id is None else checked("runId", run_id))
    return Call("GET", "/v1/artifacts", q, parse=key("artifacts"))


def get_artifact(artifact_id: str) -> Call[ArtifactRecord]:
    return Call("GET", f"/v1/artifacts/{seg('artifactId', artifact_id)}", parse=key("artifact"))


def artifact_content(artifact_id: str) -> str:
    return f"/v1/artifacts/{seg('artifactId', artifact_id)}/content"


def file_route(run_id: str, path: str) -> tuple[str, dict[str, str]]:
    return _run(run_id, "/files"), {"path": checked("path", path, MAX_PATH_CHARS)}


def list_workers() -> Call[WorkersAnswer]:
    return Call("GET", "/v1/workers")


def list_consent_requests(status: ConsentStatus | None, limit: int | None) -> Call[list[ConsentRequestView]]:
    return Call("GET", "/v1/consent-requests", query(status=status, limit=limit), parse=key("requests"))


def list_worker_invocations(
    run_id: str | None, worker_id: str | None, limit: int | None
) -> Call[list[WorkerInvocationView]]:
    q = query(runId=run_id, workerId=worker_id, limit=limit)
    return Call("GET", "/v1/worker-invocations", q, parse=key("invocations"))


def get_worker_invocation(invocation_id: str) -> Call[WorkerInvocationView]:
    path = f"/v1/worker-invocations/{seg('invocationId', invocation_id)}"
    return Call("GET", path, parse=key("invocation"))


def fleet() -> Call[FleetView]:
    return Call("GET", "/v1/fleet/workbenches")


def list_audit(
    run_id: str | None, type_prefix: str | None, before: int | None, limit: int | None
) -> Call[AuditPage]:
    return Call("GET", "/v1/audit", query(runId=run_id, type=type_prefix, before=before, limit=limit))


# Background processes (docs/processes.md).


def _process(run_id: str, process_id: str | None = None, tail: str = "") -> str:
    base = _run(run_id, "/processes")
    return base if process_id is None else f"{base}/{seg('processId', process_id)}{tail}"


def process_start(
    run_id: str,
    command: str,
    cwd: str | None,
    env: dict[str, str] | None,
    pty: PtySize | None,
    call_id: str | None,
) -> Call[ProcessStartPayload]:
    body = compact(command=command, cwd=cwd, env=env, pty=pty, callId=call_id)
    return Call("POST", _process(run_id), body=body, parse=key("process"))


def process_list(run_id: str, running: bool, limit: int | None) -> Call[list[ProcessView]]:
    q = query(running=True if running else None, limit=limit)
    return Call("GET", _process(run_id), q, parse=key("processes"))


def process_get(run_id: str, process_id: str) -> Call[ProcessView]:
    return Call("GET", _process(run_id, process_id), parse=key("process"))


def process_output(
    run_id: str,
    process_id: str,
    stream: str | None,
    offset: int | None,
    max_bytes: int | None,
    encoding: str | None,
) -> Call[ProcessOutputPayload]:
    q = query(stream=stream, offset=offset, maxBytes=max_bytes, encoding=encoding)
    return Call("GET", _process(run_id, process_id, "/output"), q)


def process_follow(
    run_id: str, process_id: str, stdout_offset: int, stderr_offset: int
) -> tuple[str, dict[str, str]]:
    q = query(follow=True, stdoutOffset=stdout_offset, stderrOffset=stderr_offset)
    return _process(run_id, process_id, "/output"), q


def process_write(run_id: str, process_id: str, stdin: str | None, eof: bool) -> Call[ProcessWriteAnswer]:
    body = compact(stdin=stdin, eof=True if eof else None)
    return Call("POST", _process(run_id, process_id, "/stdin"), body=body)


def process_signal(run_id: str, process_id: str, signal: ProcessSignal | None) -> Call[ProcessView]:
    body = compact(signal=signal)
    return Call("POST", _process(run_id, process_id, "/signal"), body=body, parse=key("process"))


def process_wait(run_id: str, process_id: str, timeout_ms: int | None) -> Call[ProcessView]:
    body = compact(timeoutMs=timeout_ms)
    return Call("POST", _process(run_id, process_id, "/wait"), body=body, parse=key("process"))


def process_resize(run_id: str, process_id: str, cols: int, rows: int) -> Call[ProcessView]:
    body = {"cols": cols, "rows": rows}
    return Call("POST", _process(run_id, process_id, "/resize"), body=body, parse=key("process"))


# A workspace's history (docs/versions.md).


def _ref(version: int | None, label: str | None, required: bool) -> dict[str, Any]:
    if version is not None and label is not None:
        raise ValueError("give a version or a label, not both")
    if required and version is None and label is None:
        raise ValueError("give the version to restore: its number (version=) or label (label=)")
    return compact(version=version, label=label)


def version_list(
    run_id: str, limit: int | None, before: int | None, labelled: bool
) -> Call[VersionListPayload]:
    q = query(limit=limit, before=before, labelled=True if labelled else None)
    return Call("GET", _run(run_id, "/versions"), q)


def version_diff(
    run_id: str, from_version: int, to: int | None, limit: int | None, after: str | None
) -> Call[VersionDiffPayload]:
    q = query(to=to, limit=limit, after=after)
    return Call("GET", _run(run_id, "/versions/diff"), {"from": str(from_version), **q})


def version_checkpoint(run_id: str, label: str, version: int | None) -> Call[VersionView]:
    body = compact(label=label, version=version)
    return Call("POST", _run(run_id, "/checkpoints"), body=body, parse=key("version"))


def version_remove_checkpoint(run_id: str, label: str) -> Call[VersionView]:
    path = _run(run_id, f"/checkpoints/{seg('label', label)}")
    return Call("DELETE", path, parse=key("version"))


def version_restore(
    run_id: str, version: int | None, label: str | None, call_id: str | None
) -> Call[VersionRestorePayload]:
    body = {**_ref(version, label, True), **compact(callId=call_id)}
    return Call("POST", _run(run_id, "/restore"), body=body)


def version_fork(
    run_id: str, version: int | None, label: str | None, conversation_id: str | None
) -> Call[ForkAnswer]:
    body = {**_ref(version, label, False), **compact(conversationId=conversation_id)}
    return Call("POST", _run(run_id, "/fork"), body=body)


def version_manifest(
    run_id: str, version: int | None, after: str | None, limit: int | None
) -> Call[ManifestPage]:
    return Call("GET", _run(run_id, "/manifest"), query(version=version, after=after, limit=limit))
