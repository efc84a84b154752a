"""The Python client of the memql-workbench HTTP API, for tool loops and scripts.

A run is a sandboxed Linux workspace; a tool loop gives its model one tool,
``workbenchHost`` (:func:`workbench_tool_definition`), and runs each call of it with
:meth:`WorkbenchClient.workbench_host`. The same methods are on
:class:`AsyncWorkbenchClient`, awaited. Failures raise a :class:`WorkbenchError` of the
code's category (:class:`CallerError`, :class:`PolicyError`,
:class:`WorkbenchEnvironmentError`, :class:`DependencyError`, :class:`InternalError`)
carrying ``code``, ``message``, ``status`` and ``payload``::

    from memql_workbench import CallerError, OutputChunk, WorkbenchClient

    with WorkbenchClient("http://127.0.0.1:8080", token) as client:
        run = client.create_run(conversation_id="example")
        client.fs_write(run["id"], "notes.md", "# Notes\\n")
        for event in client.exec_stream(run["id"], "wc -l notes.md"):
            if isinstance(event, OutputChunk):
                print(event.data.decode(), end="")
        try:
            client.fs_read(run["id"], "missing.md")
        except CallerError as err:
            print(err.code)  # path_not_found
        client.end_run(run["id"], "succeeded")
"""

from ._async_io import AsyncDispatchStream, AsyncProcessFollow
from ._contract import (
    ERROR_CODES,
    TERMINAL_RUN_STATUSES,
    TOOL_ACTION_NAMES,
    ErrorCategory,
    ErrorCode,
    Need,
    ProcessSignal,
    Scope,
    TerminalRunStatus,
    TokenKind,
    ToolActionName,
)
from ._sources import (
    AsyncUploadSource,
    BinaryReader,
    BinaryWriter,
    DownloadTarget,
    ProgressListener,
    UploadSource,
)
from ._sync_io import DispatchStream, ProcessFollow
from .async_client import AsyncWorkbenchClient
from .client import WorkbenchClient
from .errors import (
    CallerError,
    DependencyError,
    InternalError,
    PolicyError,
    WorkbenchEnvironmentError,
    WorkbenchError,
    error_class,
    error_from_failure,
)
from .events import (
    CommandOutput,
    DownloadResult,
    FollowedOutput,
    FollowEvent,
    OutputChunk,
    ProcessEnded,
    StreamEvent,
    StreamResult,
)
from .processes import AsyncProcessClient, ProcessClient
from .tool import (
    WORKBENCH_TOOL_NAME,
    AsyncWorkbenchHost,
    ToolDefinition,
    WorkbenchHost,
    workbench_tool_definition,
)
from .versions import AsyncVersionClient, VersionClient

__version__ = "0.1.0"

__all__ = [
    "ERROR_CODES",
    "TERMINAL_RUN_STATUSES",
    "TOOL_ACTION_NAMES",
    "WORKBENCH_TOOL_NAME",
    "AsyncDispatchStream",
    "AsyncProcessClient",
    "AsyncProcessFollow",
    "AsyncUploadSource",
    "AsyncVersionClient",
    "AsyncWorkbenchClient",
    "AsyncWorkbenchHost",
    "BinaryReader",
    "BinaryWriter",
    "CallerError",
    "CommandOutput",
    "DependencyError",
    "DispatchStream",
    "DownloadResult",
    "DownloadTarget",
    "ErrorCategory",
    "ErrorCode",
    "FollowEvent",
    "FollowedOutput",
    "InternalError",
    "Need",
    "OutputChunk",
    "PolicyError",
    "ProcessClient",
    "ProcessEnded",
    "ProcessFollow",
    "ProcessSignal",
    "ProgressListener",
    "Scope",
    "StreamEvent",
    "StreamResult",
    "TerminalRunStatus",
    "TokenKind",
    "ToolActionName",
    "ToolDefinition",
    "UploadSource",
    "VersionClient",
    "WorkbenchClient",
    "WorkbenchEnvironmentError",
    "WorkbenchError",
    "WorkbenchHost",
    "error_class",
    "error_from_failure",
    "workbench_tool_definition",
]
