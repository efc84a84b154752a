-- Runs: the unit a workspace belongs to. The owner is the only source of a
-- workspace's owner. Terminal statuses: succeeded, failed, cancelled, abandoned.
create table run (
  id text primary key,
  owner_user_id text not null,
  conversation_id text,
  status text not null default 'running'
    check (status in ('running', 'succeeded', 'failed', 'cancelled', 'abandoned')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  ended_at timestamptz,
  retention_expires_at timestamptz,
  deleted_at timestamptz
);
create index run_owner_idx on run (owner_user_id, created_at desc);

-- Workspaces: one row per (run, node). At most one live row per run: that row
-- names the replica holding the run's warm directory (affinity).
create table workbench_workspace (
  id text primary key,
  run_id text not null references run (id),
  node_id text,
  owner_user_id text not null,
  status text not null default 'provisioned'
    check (status in ('provisioned', 'released', 'deleted')),
  released_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  released_at timestamptz,
  check ((status = 'provisioned') = (released_reason is null))
);
create unique index workbench_workspace_live_idx on workbench_workspace (run_id)
  where status = 'provisioned';
create index workbench_workspace_owner_idx on workbench_workspace (owner_user_id, created_at desc);

-- The durable file manifest of a run: one version counter per run, one row per
-- file. Bytes live in the object store under the content hash.
create table workspace_manifest (
  run_id text primary key references run (id),
  version bigint not null default 0,
  updated_by_node text,
  updated_at timestamptz not null default now()
);
create table workspace_file (
  run_id text not null references workspace_manifest (run_id),
  path text not null,
  hash text not null,
  size bigint not null check (size >= 0),
  mode integer not null,
  mtime_ms bigint not null,
  version bigint not null,
  primary key (run_id, path)
);

-- The durable command queue. Lifecycle:
-- queued -> running -> completed | failed | timed_out | cancelled.
create table workspace_command (
  id text primary key,
  run_id text not null references run (id),
  workspace_id text,
  owner_user_id text not null,
  conversation_id text,
  call_id text,
  status text not null default 'queued'
    check (status in ('queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled')),
  request jsonb not null,
  timeout_ms integer not null check (timeout_ms > 0),
  attempts integer not null default 0,
  lease_owner text,
  lease_expires_at timestamptz,
  cancel_requested boolean not null default false,
  exit_code integer,
  error_code text,
  error_category text,
  stdout bytea,
  stderr bytea,
  stdout_truncated boolean not null default false,
  stderr_truncated boolean not null default false,
  queued_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  check ((status = 'running') = (lease_owner is not null))
);
create index workspace_command_queued_idx on workspace_command (queued_at, id)
  where status = 'queued';
create index workspace_command_lease_idx on workspace_command (lease_expires_at)
  where status = 'running';
create index workspace_command_run_idx on workspace_command (run_id, queued_at);
create unique index workspace_command_call_idx on workspace_command (run_id, call_id)
  where call_id is not null;

-- Audit events: ids, counts and codes only; never command text, output, file
-- contents or credentials.
create table audit_event (
  id bigserial primary key,
  event_type text not null,
  run_id text,
  workspace_id text,
  command_id text,
  owner_user_id text,
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index audit_event_run_idx on audit_event (run_id, id);
create index audit_event_command_idx on audit_event (command_id, id);

-- Promoted artifacts: the only files an end user can download.
create table artifact (
  id text primary key,
  run_id text not null references run (id),
  owner_user_id text not null,
  name text not null,
  content_type text not null,
  size bigint not null check (size >= 0),
  hash text not null,
  object_key text not null,
  source_path text not null,
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index artifact_owner_idx on artifact (owner_user_id, created_at desc);
create index artifact_run_idx on artifact (run_id);
