/**
 * Where and how commands run: the sandbox backend, remote workbenches, the queue and
 * node liveness, workspaces (their warm copies, quotas, uploads and versions),
 * background processes, and the limits of one command. Part of `CONFIG_VARIABLES`
 * (`variables.ts`), in the order the table lists them.
 *
 * @module
 */

import type { ConfigVariable } from './config-variable.js';

/** The variables of this part of the registry. */
export const WORKBENCH_VARIABLES = [
  {
    name: 'MEMQL_RUNNER',
    default: undefined,
    defaultText: 'unset: auto (bwrap on Linux when available, else commands are refused)',
    type: '`bwrap`, `docker`, `process` or `auto`',
    description:
      'Sandbox backend for `exec`. `process` gives no isolation and is only used when named here; `bwrap` requires Linux.',
  },
  {
    name: 'MEMQL_RUNNER_IMAGE',
    default: 'memql/runner:latest',
    type: 'container image reference',
    description:
      'Image the `docker` runner starts commands in: the `runner` target of `deploy/Dockerfile`.',
    aliases: ['EXECUTION_WORKSPACE_RUNNER_IMAGE'],
  },
  {
    name: 'MEMQL_WORKBENCH_REMOTE',
    default: 'false',
    type: 'boolean',
    description:
      'Agent nodes send workbench calls to a workbench peer; with no healthy peer a call is refused (`no_workbench_peer`), never run locally. Requires a `workbench=` seed in `MEMQL_WORKER_PEERS`.',
  },
  {
    name: 'MEMQL_WORKBENCH_LOCAL_FALLBACK',
    default: 'false',
    type: 'boolean',
    description:
      'With `MEMQL_WORKBENCH_REMOTE`, run a call in-process when no workbench peer is healthy. For development.',
  },
  {
    name: 'MEMQL_WORKER_PEERS',
    default: '',
    defaultText: 'empty',
    type: 'comma-separated `type=host:port`; IPv6 in brackets',
    description:
      'Seeds the agent node dials, e.g. `workbench=workbench:50060`. Each host resolves to all its addresses. A malformed entry fails startup; no seed is ever dropped.',
  },
  {
    name: 'MEMQL_COMMAND_CONCURRENCY',
    aliases: ['MEMQL_WORKER_CONCURRENCY'],
    default: '4',
    type: 'positive integer (commands)',
    description:
      'Commands this node runs at once; the rest wait in the queue (queue wait says when to raise it). Not taken from the CPU count: in a container that is the host\'s, not the quota, and the right number depends on the commands and their memory limit. `MEMQL_WORKER_CONCURRENCY`, its old name, is still read, with a warning: "worker" names the worker hosts.',
  },
  {
    name: 'MEMQL_QUEUE_FOLLOW_UP_LEAD_MS',
    default: '30000',
    type: 'non-negative integer (ms)',
    description:
      "How far ahead of its arrival a run's later command may stand in the queue. Claims go by place: a run's first command stands at its arrival, a later one where its run's previous command stood, but never more than this before its own arrival; so a run being served does not wait behind every newer run's first command, and no command is passed by one that arrived more than this after it. `0`: first come, first served.",
  },
  {
    name: 'MEMQL_COMMAND_KEEP_MS',
    default: '2592000000',
    type: 'non-negative integer (ms)',
    description:
      "How long a finished command's row (its result) is kept after it finished (30 days); the sweeper then deletes it, a bounded batch at a time. Queued and running commands are never deleted. Reading a deleted command by id, or repeating its `callId`, answers `command_expired` while its audit events are kept. `0`: kept until the run is deleted.",
  },
  {
    name: 'MEMQL_AUDIT_KEEP_MS',
    default: '7776000000',
    type: 'non-negative integer (ms)',
    description:
      'How long an audit event is kept after it was written (90 days); the sweeper then deletes it, a bounded batch at a time. Keep it at least `MEMQL_COMMAND_KEEP_MS`: a removed command is told from one that never existed by its events. `0`: kept until the run is deleted.',
  },
  {
    name: 'MEMQL_COMMAND_LEASE_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description:
      'Lease of a running command; its worker heartbeats well within it, and an expired lease is recovered.',
  },
  {
    name: 'MEMQL_NODE_LIVENESS_MS',
    default: '10000',
    type: 'positive integer (ms)',
    description:
      'How long a workbench node may stay silent before the others count it gone: they then take its workspaces over (fenced) and end its running commands as `command_lost`. Nodes heartbeat five times per window.',
  },
  {
    name: 'MEMQL_HANDOFF_WAIT_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description:
      'How long a call for a workspace held by a draining node waits for that node to hand it off before answering `unavailable`.',
  },
  {
    name: 'MEMQL_QUEUE_POLL_INTERVAL_MS',
    default: '1000',
    type: 'positive integer (ms)',
    description:
      'How often an idle worker polls the queue, and how often a node reads the rows of the commands its callers wait for; the backstop to wake-ups (in-process, and `NOTIFY` from other nodes on Postgres).',
  },
  {
    name: 'MEMQL_HYDRATED_IDLE_TTL_MS',
    default: '900000',
    type: 'non-negative integer (ms)',
    description:
      'How long a hydrated workspace stays warm for reuse after its last command; `0` disables reuse.',
  },
  {
    name: 'MEMQL_WARM_MANIFESTS_MAX',
    default: '256',
    type: 'positive integer (runs)',
    description:
      "Most warm workspaces whose manifest (the files the copy matches, the base of its next sync) a workbench node keeps in memory, the most recently used; an older one keeps only its version, and the run's next action reads its manifest back from the database (one query) instead of comparing the copy in full. Bounds what thousands of idle workspaces cost a node.",
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_BYTES',
    default: '4294967296',
    type: 'positive integer (bytes)',
    description:
      'Most bytes the files of one workspace may hold (4 GiB). A write or command that would go over is refused or stopped (`workspace_quota_exceeded`) and nothing of it is kept.',
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_FILES',
    default: '250000',
    type: 'positive integer (files)',
    description:
      'Most files one workspace may hold. A write or command that would go over is refused or stopped (`workspace_quota_exceeded`) and nothing of it is kept.',
  },
  {
    name: 'MEMQL_CLEANUP_INTERVAL_MS',
    default: '300000',
    type: 'positive integer (ms)',
    description:
      'Period of the sweeper that removes workspaces of deleted or expired runs and unclaimed directories.',
  },
  {
    name: 'MEMQL_UPLOAD_IDLE_MS',
    default: '3600000',
    type: 'positive integer (ms)',
    description:
      "How long the staged bytes of an upload (`fs_write` in parts, `PUT /v1/runs/:runId/files`) are kept with no new part before the sweeper removes them. Staged bytes count against the workspace's `MEMQL_WORKSPACE_MAX_BYTES`, and go as soon as the upload completes, is refused or aborted, its run ends or is deleted, or the node restarts.",
  },
  {
    name: 'MEMQL_VERSION_KEEP_COUNT',
    default: '100',
    type: 'non-negative integer',
    description:
      "A run's newest versions that are kept whatever their age (`version_list`, `version_restore`); older ones go once they are also older than `MEMQL_VERSION_KEEP_MS`. Labelled versions (`version_checkpoint`) and the current one are always kept; blobs only removed versions needed are deleted.",
  },
  {
    name: 'MEMQL_VERSION_KEEP_MS',
    default: '86400000',
    type: 'non-negative integer (ms)',
    description:
      'How long a version is kept whatever the count: one older than this and not among the newest `MEMQL_VERSION_KEEP_COUNT` is removed by the sweeper.',
  },
  {
    name: 'MEMQL_PROCESS_MAX_PER_RUN',
    default: '8',
    type: 'positive integer',
    description:
      'Most background processes (`process_start`) one run may have running at once; one more is refused `process_limit` until one ends.',
  },
  {
    name: 'MEMQL_PROCESS_MAX_LIFETIME_MS',
    default: '86400000',
    type: 'positive integer (ms)',
    description:
      'Longest a background process may run: past it the node ends it (`killed`, `SIGKILL`). Ending the run ends its processes sooner.',
  },
  {
    name: 'MEMQL_PROCESS_SYNC_MS',
    default: '5000',
    type: 'positive integer (ms)',
    description:
      "How often the files a run's background processes write are synced to durable storage while one runs (and once more when each ends): what a lost replica's processes wrote since is not kept.",
  },
  {
    name: 'MEMQL_EXEC_TIMEOUT_MS',
    default: '120000',
    type: 'positive integer (ms)',
    description: 'Timeout of an `exec` that names none. At most `MEMQL_EXEC_MAX_TIMEOUT_MS`.',
  },
  {
    name: 'MEMQL_EXEC_MAX_TIMEOUT_MS',
    default: '3600000',
    type: 'positive integer (ms)',
    description: 'Largest timeout an `exec` may ask for.',
  },
  {
    name: 'MEMQL_EXEC_OUTPUT_LIMIT_BYTES',
    default: '1048576',
    type: 'positive integer (bytes, per stream)',
    description: 'Output kept from each of stdout and stderr of one command; the rest is cut.',
  },
  {
    name: 'MEMQL_EXEC_MEMORY_LIMIT_BYTES',
    default: '1073741824',
    type: 'positive integer (bytes)',
    description: "Memory limit of one command's sandbox.",
  },
  {
    name: 'MEMQL_EXEC_PIDS_LIMIT',
    default: '256',
    type: 'positive integer (processes)',
    description: "Process limit of one command's sandbox.",
  },
  {
    name: 'MEMQL_EXEC_CPU_LIMIT',
    default: '1',
    type: 'decimal from 0.01 to 1024 (CPUs)',
    description:
      "CPU limit of one command's sandbox, all its processes together: `0.5` is half of one CPU's time, `2` two CPUs'. The `bwrap` runner sets a CFS quota (cgroup v1 `cpu`); the `docker` runner sets `NanoCpus`, which Docker refuses above the CPUs of its host.",
  },
  {
    name: 'MEMQL_SANDBOX_IDLE_MS',
    default: '30000',
    type: 'non-negative integer (ms)',
    description:
      "How long the `bwrap` runner keeps a run's sandbox warm after a command, for the run's next command to start in it instead of a new sandbox (its agent needs `/usr/bin/perl`). Each command still gets a clean environment, fresh pipes, an empty `/tmp`, `/var/tmp` and `/dev/shm`, and nothing an earlier command started; a file changed by anything but a command, a time limit or a cancel ends the warm sandbox. `0`: every command starts a sandbox of its own.",
  },
  {
    name: 'MEMQL_SANDBOX_WARM_POOL',
    default: '4',
    type: 'non-negative integer (sandboxes)',
    description:
      "Sandboxes the `bwrap` runner keeps started ahead of any run, so that a run's first command does not wait for one: each is a warm sandbox like a run's (same mounts, uid, seccomp filter, limits, no network), over an empty directory of its own in `MEMQL_WORKBENCH_ROOT`, given to one run only, when its first command finds the run's workspace empty, and replaced in the background. A command with network, or other limits, starts its own. `0`, or `MEMQL_SANDBOX_IDLE_MS=0`: no pool.",
  },
  {
    name: 'MEMQL_EXEC_ALLOWLIST_EXTRA',
    default: '',
    defaultText: 'empty',
    type: 'comma-separated command names',
    description: 'Commands allowed in `exec` beyond the built-in allowlist.',
  },
] as const satisfies readonly ConfigVariable[];
