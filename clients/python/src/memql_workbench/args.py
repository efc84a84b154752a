"""The ``args`` of every ``workbenchHost`` action a tool loop may call, as ``TypedDict``\\ s.

Named after the contract's schemas (``fsWriteArgsSchema`` is :class:`FsWriteArgs`), with
the keys a caller writes: the required ones, and the optional ones (``total=False``)
the server fills with their defaults. ``docs/actions.md`` gives each one's meaning and
limits; ``test/client/python-sdk.test.ts`` checks these keys against the schemas.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from ._contract import ProcessSignal, ToolActionName
from .views import PtySize

Encoding = Literal["utf8", "base64"]
"""How a string carries bytes: UTF-8 text, or base64."""


class _UploadPart(TypedDict):
    id: str
    offset: int


class UploadPart(_UploadPart, total=False):
    """One part of a large file written in parts (``fs_write``'s ``upload``)."""

    complete: bool
    size: int
    abort: bool


class _FsWriteArgs(TypedDict):
    path: str
    content: str


class FsWriteArgs(_FsWriteArgs, total=False):
    """``fs_write``: create, replace or append to a file."""

    encoding: Encoding
    append: bool
    mode: str
    upload: UploadPart


class _FsReadArgs(TypedDict):
    path: str


class FsReadArgs(_FsReadArgs, total=False):
    """``fs_read``: a file, or a byte range of it."""

    encoding: Encoding
    offset: int
    length: int


class FsListArgs(TypedDict, total=False):
    """``fs_list``: a directory (the workspace root by default)."""

    path: str
    recursive: bool
    limit: int


class _FsDeleteArgs(TypedDict):
    path: str


class FsDeleteArgs(_FsDeleteArgs, total=False):
    """``fs_delete``: a file, or a directory tree with ``recursive``."""

    recursive: bool


class _ExpectedOutput(TypedDict):
    path: str


class ExpectedOutput(_ExpectedOutput, total=False):
    """A file an ``exec`` is to leave, promoted as an artifact when it exits 0."""

    name: str
    contentType: str


class _ExecArgs(TypedDict):
    command: str


class ExecArgs(_ExecArgs, total=False):
    """``exec``: an allowlisted shell command in the sandbox, in the workspace."""

    timeoutMs: int
    env: dict[str, str]
    stdin: str
    cwd: str
    outputs: list[ExpectedOutput]


class _FetchArgs(TypedDict):
    url: str
    path: str


class FetchArgs(_FetchArgs, total=False):
    """``fetch``: download an http(s) URL into a workspace file."""

    maxBytes: int
    timeoutMs: int


class _PromoteArtifactArgs(TypedDict):
    path: str


class PromoteArtifactArgs(_PromoteArtifactArgs, total=False):
    """``promote_artifact``: hand a workspace file to the user."""

    name: str
    contentType: str


class _ProcessStartArgs(TypedDict):
    command: str


class ProcessStartArgs(_ProcessStartArgs, total=False):
    """``process_start``: a background process that outlives the call."""

    cwd: str
    env: dict[str, str]
    pty: PtySize


class ProcessListArgs(TypedDict, total=False):
    """``process_list``: the run's processes, newest first."""

    running: bool
    limit: int


class _ProcessIdArgs(TypedDict):
    processId: str


class ProcessOutputArgs(_ProcessIdArgs, total=False):
    """``process_output``: a process's stdout or stderr from a byte offset."""

    stream: Literal["stdout", "stderr"]
    offset: int
    maxBytes: int
    encoding: Encoding


class ProcessWriteArgs(_ProcessIdArgs, total=False):
    """``process_write``: text to a running process's standard input, or its end."""

    stdin: str
    eof: bool


class ProcessSignalArgs(_ProcessIdArgs, total=False):
    """``process_signal``: a signal (``SIGTERM`` by default) to its process group."""

    signal: ProcessSignal


class ProcessWaitArgs(_ProcessIdArgs, total=False):
    """``process_wait``: wait up to ``timeoutMs`` for a process to end."""

    timeoutMs: int


class ProcessResizeArgs(TypedDict):
    """``process_resize``: a running process's terminal size."""

    processId: str
    cols: int
    rows: int


class VersionListArgs(TypedDict, total=False):
    """``version_list``: the workspace's versions, newest first."""

    limit: int
    before: int
    labelled: bool


_VersionDiffRequired = TypedDict("_VersionDiffRequired", {"from": int})


class VersionDiffArgs(_VersionDiffRequired, total=False):
    """``version_diff``: the paths added, changed and removed between two versions."""

    to: int
    limit: int
    after: str


class _VersionCheckpointArgs(TypedDict):
    label: str


class VersionCheckpointArgs(_VersionCheckpointArgs, total=False):
    """``version_checkpoint``: label a version, or take a label off."""

    version: int
    remove: bool


class VersionRestoreArgs(TypedDict):
    """``version_restore``: put the workspace back to a version (number or label)."""

    to: int | str


ActionArgs = (
    FsWriteArgs
    | FsReadArgs
    | FsListArgs
    | FsDeleteArgs
    | ExecArgs
    | FetchArgs
    | PromoteArtifactArgs
    | ProcessStartArgs
    | ProcessListArgs
    | ProcessOutputArgs
    | ProcessWriteArgs
    | ProcessSignalArgs
    | ProcessWaitArgs
    | ProcessResizeArgs
    | VersionListArgs
    | VersionDiffArgs
    | VersionCheckpointArgs
    | VersionRestoreArgs
)
"""The ``args`` of any tool action."""

ACTION_ARGS: dict[ToolActionName, type] = {
    "fs_write": FsWriteArgs,
    "fs_read": FsReadArgs,
    "fs_list": FsListArgs,
    "fs_delete": FsDeleteArgs,
    "exec": ExecArgs,
    "fetch": FetchArgs,
    "promote_artifact": PromoteArtifactArgs,
    "process_start": ProcessStartArgs,
    "process_list": ProcessListArgs,
    "process_output": ProcessOutputArgs,
    "process_write": ProcessWriteArgs,
    "process_signal": ProcessSignalArgs,
    "process_wait": ProcessWaitArgs,
    "process_resize": ProcessResizeArgs,
    "version_list": VersionListArgs,
    "version_diff": VersionDiffArgs,
    "version_checkpoint": VersionCheckpointArgs,
    "version_restore": VersionRestoreArgs,
}
"""The ``args`` class of each tool action."""
