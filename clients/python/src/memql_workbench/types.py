"""The shapes the HTTP API answers with, as ``TypedDict``\\ s named as the contract names them.

They mirror the JSON on the wire (``src/contract/`` and ``src/client/types.ts``), so
their keys are the API's camelCase. Timestamps are ISO 8601 strings. A key that an
answer carries only sometimes is optional here (``total=False`` on the second half of a
split class: the first half holds the keys always present).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ._contract import Need, Scope, TokenKind

RunStatus = Literal["running", "succeeded", "failed", "cancelled", "abandoned"]
"""A run's status: ``running``, then one of the terminal statuses."""

CommandStatus = Literal["queued", "running", "completed", "failed", "timed_out", "cancelled"]
"""How an ``exec`` command moves: ``queued -> running -> completed | failed | timed_out | cancelled``."""

OutputStream = Literal["stdout", "stderr"]
"""Which output stream a piece of output came from."""


class RunNetwork(TypedDict):
    """What a run's commands may reach: host rules and secret names; ``allow: []`` is none."""

    allow: list[str]
    secrets: list[str]


class _RunNetworkRequest(TypedDict):
    allow: list[str]


class RunNetworkRequest(_RunNetworkRequest, total=False):
    """A run's network as a caller asks for it: host rules within the operator's ceiling."""

    secrets: list[str]


class Run(TypedDict):
    """A run, owned by the user whose token created it."""

    id: str
    status: RunStatus
    ownerUserId: str
    conversationId: str | None
    createdAt: str
    endedAt: str | None
    retentionExpiresAt: str | None
    network: RunNetwork


class RunPage(TypedDict):
    """One page of the caller's runs, newest first; ``nextBefore`` is None on the last."""

    runs: list[Run]
    nextBefore: str | None


class EndRunAnswer(TypedDict):
    """``POST /v1/runs/:runId/end``: the run, and whether this call released its workspace."""

    run: Run
    released: bool


class DeletedCounts(TypedDict):
    """What deleting a run removed, counted by kind."""

    objects: int
    commands: int
    workspaces: int
    artifacts: int


class EnvironmentHint(TypedDict, total=False):
    """What an action needs beyond a headless Linux sandbox; omit it otherwise."""

    os: str
    needs: list[Need]


class WorkerRouting(TypedDict):
    """Where a call that ran on a worker host ran (``result["routing"]``)."""

    target: Literal["worker"]
    reroutedFrom: Literal["workbench"]
    workerId: str
    needs: list[str]
    scope: Scope
    invocationId: str


class _DispatchSuccess(TypedDict):
    ok: Literal[True]
    payload: Any


class DispatchSuccess(_DispatchSuccess, total=False):
    """A call that did what it was asked; ``payload`` is the action's answer."""

    routing: WorkerRouting


class _DispatchFailure(TypedDict):
    ok: Literal[False]
    errorCode: str
    message: str


class DispatchFailure(_DispatchFailure, total=False):
    """A refused or failed call: ``errorCode`` is what callers match on."""

    payload: Any
    routing: WorkerRouting


DispatchResult = DispatchSuccess | DispatchFailure
"""The answer to one dispatch: what a tool loop hands back to its model."""


class _FsReadPayload(TypedDict):
    path: str
    encoding: Literal["utf8", "base64"]
    content: str
    offset: int
    bytesRead: int
    size: int
    eof: bool


class FsReadPayload(_FsReadPayload, total=False):
    """``fs_read``: ``binary`` when utf8 was asked for and the bytes were not, so came as base64."""

    binary: bool


class _UploadState(TypedDict):
    id: str
    staged: int
    complete: bool


class UploadState(_UploadState, total=False):
    """An upload's parts so far, on the answer to each part."""

    aborted: bool


class _FsWritePayload(TypedDict):
    path: str
    bytesWritten: int
    size: int


class FsWritePayload(_FsWritePayload, total=False):
    """``fs_write`` (and a file upload): ``version`` is the workspace's version after it."""

    upload: UploadState
    version: int


class FsListEntry(TypedDict):
    """One entry of an ``fs_list`` answer."""

    path: str
    type: Literal["file", "directory", "symlink", "other"]
    size: int
    mtimeMs: float


class RefusedPath(TypedDict):
    """A workspace entry a file action or a sync could not keep or reach."""

    path: str
    reason: str


class _FsListPayload(TypedDict):
    path: str
    entries: list[FsListEntry]
    truncated: bool


class FsListPayload(_FsListPayload, total=False):
    """``fs_list``: ``truncated`` when more entries exist than were returned."""

    refused: list[RefusedPath]


class _FsDeletePayload(TypedDict):
    path: str
    deleted: bool
    type: str


class FsDeletePayload(_FsDeletePayload, total=False):
    """``fs_delete``: what was deleted (a file, a link or a directory)."""

    version: int


class _FetchPayload(TypedDict):
    path: str
    bytes: int
    status: int
    contentType: str | None
    finalUrl: str


class FetchPayload(_FetchPayload, total=False):
    """``fetch``: the file written, the HTTP status, and where redirects ended."""

    version: int


class PromotedArtifact(TypedDict):
    """A promoted artifact as a promotion answers it (``promote_artifact``, ``exec`` outputs)."""

    artifactId: str
    name: str
    contentType: str
    size: int
    sha256: str
    path: str
    runId: str


PromotePayload = PromotedArtifact
"""``promote_artifact``'s answer."""


class OutputError(TypedDict):
    """Why an expected output of ``exec`` was not promoted."""

    code: str
    message: str


class _ExpectedOutputResult(TypedDict):
    path: str


class ExpectedOutputResult(_ExpectedOutputResult, total=False):
    """What became of one expected output: its ``artifact``, or the ``error`` saying why none."""

    artifact: PromotedArtifact
    error: OutputError


class FilesRefused(TypedDict):
    """Entries a command left that its sync could not keep: how many, and the first of them."""

    total: int
    entries: list[RefusedPath]


class RefusedDestination(TypedDict):
    """One destination the egress proxy refused while a command ran."""

    host: str
    port: int
    reason: str


class CommandEgress(TypedDict):
    """The destinations refused while a command with network ran."""

    refused: list[RefusedDestination]


class CommandEnding(TypedDict):
    """How a command ended, as callers read it."""

    status: CommandStatus
    exitCode: int | None
    signal: str | None
    timedOut: bool
    cancelled: bool
    oomKilled: bool
    stdoutTruncated: bool
    stderrTruncated: bool
    durationMs: int | None


class _ExecPayload(CommandEnding):
    commandId: str
    stdout: str
    stderr: str


class ExecPayload(_ExecPayload, total=False):
    """``exec``: a non-zero exit is an answer, not an error. Output is base64 when its encoding says."""

    stdoutEncoding: Literal["base64"]
    stderrEncoding: Literal["base64"]
    filesRefused: FilesRefused
    outputs: list[ExpectedOutputResult]
    egress: CommandEgress
    version: int


class _CommandSummaryRecord(CommandEnding):
    id: str
    runId: str
    callId: str | None
    errorCode: str | None
    errorCategory: str | None
    timeoutMs: int
    attempts: int
    queuedAt: str
    startedAt: str | None
    finishedAt: str | None


class CommandSummaryRecord(_CommandSummaryRecord, total=False):
    """A command as a run's command list shows it: how it ended, without its output."""

    filesRefused: FilesRefused


class _CommandRecord(CommandSummaryRecord):
    stdout: str
    stderr: str


class CommandRecord(_CommandRecord, total=False):
    """A command read by id: the list's fields and its output."""

    stdoutEncoding: Literal["base64"]
    stderrEncoding: Literal["base64"]
    outputs: list[ExpectedOutputResult]


class CommandPage(TypedDict):
    """One page of a run's commands, newest first."""

    commands: list[CommandSummaryRecord]
    nextBefore: str | None


class CancelAnswer(TypedDict):
    """What a cancel did: ``cancelled`` (was queued), ``cancelling`` (being killed), ``ended``."""

    command: CommandRecord
    effect: Literal["cancelled", "cancelling", "ended"]


class WorkspaceRecord(TypedDict):
    """A workspace row of one of the caller's runs."""

    id: str
    runId: str
    nodeId: str
    status: str
    releasedReason: str | None
    releasedReasonText: str | None
    createdAt: str
    releasedAt: str | None


class WorkspacePage(TypedDict):
    """One page of the caller's workspaces, newest first."""

    workspaces: list[WorkspaceRecord]
    nextBefore: str | None


class ArtifactRecord(TypedDict):
    """A promoted artifact."""

    id: str
    runId: str
    name: str
    contentType: str
    size: int
    sha256: str
    createdAt: str


class _TokenRecord(TypedDict):
    id: str
    kind: TokenKind
    label: str | None
    createdAt: str
    revokedAt: str | None


class TokenRecord(_TokenRecord, total=False):
    """An API token as its user sees it: never its secret."""

    userId: str


class RevokeAnswer(TypedDict):
    """``DELETE /v1/tokens/:id``: the token, and whether this call revoked it."""

    token: TokenRecord
    revoked: bool


class MeAnswer(TypedDict):
    """``GET /v1/me``: who the token speaks for."""

    userId: str
    tokenKind: TokenKind


class AuditEvent(TypedDict):
    """One audit event: ids, counts, codes and durations, never command text or contents."""

    id: int
    eventType: str
    runId: str | None
    workspaceId: str | None
    commandId: str | None
    ownerUserId: str | None
    metadata: dict[str, Any]
    createdAt: str


class AuditPage(TypedDict):
    """One page of the caller's audit events, newest first."""

    events: list[AuditEvent]
    nextBefore: int | None
