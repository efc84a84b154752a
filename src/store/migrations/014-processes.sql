-- A run's background processes: one row per process, started on one replica (node_id)
-- and ended there, or lost with it. Its output is kept beside it in chunks, each at
-- its byte offset in its stream (1 stdout, 2 stderr; a PTY's output is stdout), so a
-- reader can follow it from an offset while it runs and read it after it ended. The
-- request holds what started it (command, cwd, env, pty); the row never holds stdin.
create table workspace_process (
  id text primary key,
  run_id text not null references run (id),
  owner_user_id text not null,
  node_id text not null,
  call_id text,
  request jsonb not null,
  status text not null default 'running'
    check (status in ('running', 'exited', 'killed', 'lost', 'node_stopping')),
  exit_code integer,
  signal text,
  stdout_bytes bigint not null default 0 check (stdout_bytes >= 0),
  stderr_bytes bigint not null default 0 check (stderr_bytes >= 0),
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  unique (run_id, call_id)
);
create index workspace_process_by_run on workspace_process (run_id, started_at desc, id desc);
create index workspace_process_running on workspace_process (node_id) where status = 'running';
create table workspace_process_output (
  process_id text not null references workspace_process (id),
  stream smallint not null check (stream in (1, 2)),
  start_offset bigint not null check (start_offset >= 0),
  bytes bytea not null check (length(bytes) > 0),
  primary key (process_id, stream, start_offset)
);
