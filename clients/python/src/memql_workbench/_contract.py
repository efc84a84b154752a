"""The contract's vocabularies, made from src/contract by test/support/python-sdk-files.ts.

Do not edit: after a change of the contract run `npm run build`, then
`node dist/test/support/python-sdk-files.js --write`. test/client/python-sdk.test.ts
holds this file in step with the contract.
"""

from __future__ import annotations

from typing import Final, Literal

ErrorCategory = Literal[
    "caller",
    "policy",
    "environment",
    "dependency",
    "internal",
]
"""Who has to act on a failure (see ERROR_CODES)."""

ErrorCode = Literal[
    "invalid_arguments",
    "invalid_path",
    "path_not_found",
    "payload_too_large",
    "command_not_allowed",
    "no_sandbox",
    "environment_mismatch",
    "invalid_environment_hint",
    "no_workbench_peer",
    "workspace_owner_unresolved",
    "run_ended",
    "build_not_permitted",
    "build_unavailable",
    "consent_required",
    "kill_switch_engaged",
    "person_required",
    "worker_unavailable",
    "egress_not_allowed",
    "fetch_blocked",
    "fetch_failed",
    "call_id_conflict",
    "not_found",
    "command_expired",
    "unauthenticated",
    "forbidden",
    "workspace_quota_exceeded",
    "command_failed",
    "command_lost",
    "node_stopping",
    "process_not_found",
    "process_not_running",
    "process_limit",
    "process_lifetime",
    "version_not_found",
    "label_in_use",
    "port_not_listening",
    "process_lost",
    "unavailable",
    "internal",
]
"""A stable error code: callers match on it, never on messages."""

ERROR_CODES: Final[dict[str, tuple[ErrorCategory, str]]] = {
    "invalid_arguments": (
        "caller",
        "The call does not match the contract: a missing, mistyped or unknown field, named in the message.",
    ),
    "invalid_path": (
        "caller",
        "A path is absolute, escapes the workspace (by \"..\", or through a symlink), or is otherwise unusable.",
    ),
    "path_not_found": (
        "caller",
        "The path is inside the workspace but nothing exists there.",
    ),
    "payload_too_large": (
        "caller",
        "Content, stdin, output or a fetched body is over the size limit.",
    ),
    "command_not_allowed": (
        "policy",
        "An exec command names a binary that is not on the allowlist; nothing ran.",
    ),
    "no_sandbox": (
        "environment",
        "No sandbox backend is available on this node, so it refuses to run commands rather than run them unisolated.",
    ),
    "environment_mismatch": (
        "environment",
        "The environment hint asks for something a workbench does not provide; the payload lists unmetNeeds. Nothing ran.",
    ),
    "invalid_environment_hint": (
        "caller",
        "The environment hint is malformed (not an object, a bad needs list, an unknown need or os); fix the call.",
    ),
    "no_workbench_peer": (
        "environment",
        "Remote mode is on and no healthy workbench peer is reachable; the call was refused rather than run locally.",
    ),
    "workspace_owner_unresolved": (
        "caller",
        "The runId does not resolve to a readable run, so the workspace has no owner; nothing was written.",
    ),
    "run_ended": (
        "caller",
        "The run has reached a terminal status and its workspace is released; start a new run to keep working.",
    ),
    "build_not_permitted": (
        "policy",
        "The build action needs a system-class authority; tool loops cannot call it.",
    ),
    "build_unavailable": (
        "environment",
        "No healthy workbench replica can run a build: none reported node, npm and git in its sandbox. The payload lists each replica and what it lacks; nothing ran.",
    ),
    "consent_required": (
        "policy",
        "The call needs a worker host (the workbench cannot provide what it needs) and the user has not given that worker the scope it takes. A consent request was recorded (payload consentRequest); the user approves it, then the same call runs. Nothing ran.",
    ),
    "kill_switch_engaged": (
        "policy",
        "The call would run on a worker host and the user has turned computer use off (the kill switch): either nothing ran, or (payload stopped: true) the call was running when the switch was turned on and was stopped, its processes killed. No consent request was made; only the user can turn it back on.",
    ),
    "person_required": (
        "policy",
        "The request decides something only the user may decide (approving or denying a consent request, raising a worker's standing scope, turning the kill switch off), and it carries an agent token. HTTP 403; nothing changed. The user does it themselves, signed in to the console.",
    ),
    "worker_unavailable": (
        "environment",
        "The workbench cannot provide what the call needs and no connected worker host of the caller's does either; the payload names what is missing and each worker. Start a worker that provides it. Nothing ran.",
    ),
    "egress_not_allowed": (
        "policy",
        "A run's network policy names a host rule outside the operator's egress ceiling (MEMQL_EGRESS_CEILING) or a secret the operator did not define (MEMQL_EGRESS_SECRETS). HTTP 403; nothing changed. The message names each rule or secret refused and what the ceiling allows; only the operator can widen it.",
    ),
    "fetch_blocked": (
        "policy",
        "The fetch target is refused by policy (for example a private or internal address).",
    ),
    "fetch_failed": (
        "dependency",
        "The fetch target could not be retrieved (DNS, connection, timeout or an error status).",
    ),
    "call_id_conflict": (
        "caller",
        "The callId was already used in this run for a different call (another action, other arguments or another environment hint); nothing ran. A callId names one call: repeat that call exactly to get its outcome, or use a new callId.",
    ),
    "not_found": (
        "caller",
        "A named thing other than a workspace path (run, command, artifact) does not exist.",
    ),
    "command_expired": (
        "caller",
        "The command existed but finished longer ago than the node keeps command results (`MEMQL_COMMAND_KEEP_MS`), and its record was removed: its output and exit code are gone. A repeat of its callId does not run it again; send the command with a new callId if you need it run again.",
    ),
    "unauthenticated": (
        "policy",
        "The caller or peer did not prove who it is (missing or wrong token).",
    ),
    "forbidden": (
        "policy",
        "The caller is known but its authority does not allow this (for example minting a system authority for a user).",
    ),
    "workspace_quota_exceeded": (
        "caller",
        "The write or command would take the workspace over its byte or file quota; nothing of it was kept (a command is stopped). Delete files, or write less.",
    ),
    "command_failed": (
        "caller",
        "An expected output of exec was not promoted because its command did not succeed (a non-zero exit, a timeout, a cancel or a failure); the command's own status says how it ended.",
    ),
    "command_lost": (
        "dependency",
        "The node running the command stopped answering before its outcome was recorded; whether it finished is unknown, and any file changes it committed are kept. Its callId stays bound to it: run it again with a new callId.",
    ),
    "node_stopping": (
        "dependency",
        "The node running the command was shutting down and cut it off at the end of its grace period; files it wrote until then are kept. Run it again.",
    ),
    "process_not_found": (
        "caller",
        "No background process with that id belongs to this run; process_list names the ones it has.",
    ),
    "process_not_running": (
        "caller",
        "The background process has ended, so it takes no input or signal; its output stays readable with process_output.",
    ),
    "process_limit": (
        "policy",
        "The run has as many background processes running as its node allows (MEMQL_PROCESS_MAX_PER_RUN); end one with process_signal, or wait for one to end, then start again.",
    ),
    "process_lifetime": (
        "policy",
        "The background process ran the longest a process may on this node (MEMQL_PROCESS_MAX_LIFETIME_MS) and was killed; its output and files are kept. Start it again to go on, or ask the operator for a longer lifetime.",
    ),
    "version_not_found": (
        "caller",
        "The run has no kept version with that number or label: version_list names the kept ones (older unlabelled versions pass retention, MEMQL_VERSION_KEEP_COUNT and MEMQL_VERSION_KEEP_MS).",
    ),
    "label_in_use": (
        "caller",
        "That label already names another version of this run: remove it first (version_checkpoint with remove: true), or choose another label.",
    ),
    "port_not_listening": (
        "caller",
        "Nothing listens on that port in the run's sandbox: start the server with process_start first, and check its output for the port it chose.",
    ),
    "process_lost": (
        "dependency",
        "The replica running the background process was lost; its output is kept up to its last flush and its files up to their last sync. Processes are not migrated: start it again.",
    ),
    "unavailable": (
        "dependency",
        "A dependency of the workbench (database, object store) failed or is unreachable; retrying may succeed.",
    ),
    "internal": (
        "internal",
        "An unexpected failure inside the workbench; details are in the node logs only.",
    ),
}
"""Every error code: its category and what it means."""

ToolActionName = Literal[
    "fs_write",
    "fs_read",
    "fs_list",
    "fs_delete",
    "exec",
    "fetch",
    "promote_artifact",
    "process_start",
    "process_list",
    "process_output",
    "process_write",
    "process_signal",
    "process_wait",
    "process_resize",
    "version_list",
    "version_diff",
    "version_checkpoint",
    "version_restore",
]
"""An action a tool loop may call (not the system-only ones)."""

TOOL_ACTION_NAMES: Final[tuple[ToolActionName, ...]] = (
    "fs_write",
    "fs_read",
    "fs_list",
    "fs_delete",
    "exec",
    "fetch",
    "promote_artifact",
    "process_start",
    "process_list",
    "process_output",
    "process_write",
    "process_signal",
    "process_wait",
    "process_resize",
    "version_list",
    "version_diff",
    "version_checkpoint",
    "version_restore",
)

TerminalRunStatus = Literal[
    "succeeded",
    "failed",
    "cancelled",
    "abandoned",
]
"""How a run ended; reaching one releases its workspace."""

TERMINAL_RUN_STATUSES: Final[tuple[TerminalRunStatus, ...]] = (
    "succeeded",
    "failed",
    "cancelled",
    "abandoned",
)

ProcessSignal = Literal[
    "SIGTERM",
    "SIGKILL",
    "SIGINT",
    "SIGHUP",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGSTOP",
    "SIGCONT",
]
"""A signal a caller may send to a background process."""

Scope = Literal[
    "none",
    "observe",
    "full",
]
"""A rung of the consent ladder, lowest first."""

Need = Literal[
    "display",
    "gpu",
    "macos_tooling",
    "user_files",
]
"""A need an environment hint may declare."""

TokenKind = Literal[
    "agent",
    "person",
]
"""A token kind: a tool loop holds `agent`, a person `person`."""
