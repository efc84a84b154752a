"""The shapes of background processes, versions, worker hosts and the fleet, as the API answers.

Named as ``src/contract/`` names them (``process-actions.ts``, ``version-actions.ts``,
``worker-views.ts``, ``worker-consent.ts``); keys are the wire's camelCase.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ._contract import Scope
from .types import Run

ProcessState = Literal["running", "exited", "killed", "lost", "node_stopping"]
"""Where a process is: running, or how it ended."""


class ProcessView(TypedDict):
    """A background process as the actions and routes answer it."""

    processId: str
    runId: str
    status: ProcessState
    errorCode: str | None
    command: str
    cwd: str
    pty: bool
    exitCode: int | None
    signal: str | None
    stdoutBytes: int
    stderrBytes: int
    startedAt: str
    endedAt: str | None
    durationMs: int | None


class ProcessStartPayload(ProcessView):
    """``process_start``: ``replayed`` when the ``callId`` gave the process it started before."""

    replayed: bool


class ProcessOutputPayload(TypedDict):
    """``process_output``: ``data`` from ``offset``; the next read starts at ``next``."""

    processId: str
    stream: Literal["stdout", "stderr"]
    data: str
    encoding: Literal["utf8", "base64"]
    offset: int
    next: int
    total: int
    complete: bool
    status: ProcessState


class ProcessWriteAnswer(TypedDict):
    """What writing to a process's standard input did."""

    processId: str
    written: int
    eof: bool


class PtySize(TypedDict):
    """A terminal's size."""

    cols: int
    rows: int


VersionSource = Literal["action", "command", "process", "restore", "fork", "unrecorded"]
"""What made a version."""


class ForkedFrom(TypedDict):
    """Where a fork started: the run and its version."""

    runId: str
    version: int


class VersionView(TypedDict):
    """One version of a workspace, with what made it."""

    version: int
    createdAt: str
    nodeId: str | None
    generation: int | None
    source: VersionSource
    action: str | None
    commandId: str | None
    callId: str | None
    restoredFrom: int | None
    forkedFrom: ForkedFrom | None
    added: int
    changed: int
    removed: int
    label: str | None


class VersionListPayload(TypedDict):
    """``version_list``: ``current`` is the run's version now; pass ``next`` as ``before``."""

    versions: list[VersionView]
    current: int
    next: int | None


class DiffSide(TypedDict):
    """A path's entry on one side of a diff."""

    size: int
    hash: str
    mode: str


DiffEntry = TypedDict(
    "DiffEntry",
    {
        "path": str,
        "change": Literal["added", "changed", "removed"],
        "from": DiffSide | None,
        "to": DiffSide | None,
    },
)
"""One path that differs between two versions."""

VersionDiffPayload = TypedDict(
    "VersionDiffPayload",
    {
        "from": int,
        "to": int,
        "entries": list[DiffEntry],
        "added": int,
        "changed": int,
        "removed": int,
        "next": str | None,
    },
)
"""``version_diff``: counts over the whole difference; pass ``next`` as ``after``."""


class VersionRestorePayload(TypedDict):
    """``version_restore``: the new version, equal to ``restoredFrom``."""

    version: int
    restoredFrom: int
    added: int
    changed: int
    removed: int


class ForkAnswer(TypedDict):
    """A fork: the new run, where it started, and the entries its first version holds."""

    run: Run
    forkedFrom: ForkedFrom
    files: int


class ManifestEntry(TypedDict):
    """One file of a kept version."""

    path: str
    size: int
    sha256: str
    mode: str
    mtimeMs: float


class ManifestPage(TypedDict):
    """``GET /v1/runs/:runId/manifest``: the files of a version, by path; pass ``next`` as ``after``."""

    version: int
    files: list[ManifestEntry]
    next: str | None


class WorkerView(TypedDict):
    """One of the caller's worker hosts."""

    workerId: str
    connected: bool
    os: str
    provides: list[str]
    version: str
    connectedAt: str
    disconnectedAt: str | None
    inFlight: int
    capacity: int | None
    scope: Scope
    killSwitch: bool


class WorkersAnswer(TypedDict):
    """``GET /v1/workers``: the user-wide kill switch and the caller's worker hosts."""

    killSwitch: bool
    workers: list[WorkerView]


ConsentStatus = Literal["pending", "approved", "denied"]
"""A consent request's lifecycle."""


class ConsentCard(TypedDict):
    """A consent request as a caller sees it: never command text or file contents."""

    id: str
    workerId: str
    runId: str
    action: str
    needs: list[str]
    requiredScope: Scope
    heldScope: Scope
    summary: str
    status: ConsentStatus


class ConsentRequestView(ConsentCard):
    """A consent request with its history."""

    createdAt: str
    decidedAt: str | None
    decidedScope: Scope | None


class WorkerInvocationView(TypedDict):
    """The routing record of a call sent to a worker host: why it ran there."""

    id: str
    workerId: str
    runId: str
    action: str
    callId: str | None
    reroutedFrom: str
    needs: list[str]
    scope: Scope
    status: Literal["running", "succeeded", "failed", "lost"]
    errorCode: str | None
    startedAt: str
    finishedAt: str | None


class FleetView(TypedDict):
    """``GET /v1/fleet/workbenches``: ``local`` (in-process) or ``remote`` replicas, and workers."""

    mode: str
    replicas: list[dict[str, Any]]
    workers: list[WorkerView]


class ReadyCheck(TypedDict):
    """One readiness check: whether it passed, and what was found."""

    ok: bool
    detail: str


class ReadyAnswer(TypedDict):
    """``GET /readyz``: whether the node can serve calls now, and each check."""

    ready: bool
    checks: dict[str, ReadyCheck]
