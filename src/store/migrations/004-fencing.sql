-- Workers: one row per command queue a node process runs (its incarnation), keyed by
-- the lease owner it claims as. A worker is live while its status is not `stopped`
-- and its heartbeat is recent; what "recent" means is the nodes' liveness setting.
-- serving -> draining -> stopped.
create table workbench_worker (
  lease_owner text primary key,
  node_id text not null,
  status text not null default 'serving'
    check (status in ('serving', 'draining', 'stopped')),
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now(),
  stopped_at timestamptz
);
create index workbench_worker_node_idx on workbench_worker (node_id, heartbeat_at desc);

-- The fencing token of a workspace: every successor row of a run (takeover or
-- handoff) holds a higher generation than the row before it, and a manifest commit
-- names the generation it was made under.
alter table workbench_workspace add column generation bigint not null default 1
  check (generation >= 1);

-- Both sides of a path that two writers changed from the same base: the manifest
-- keeps the winner, this table the other side (content stays in the object store
-- until the run is deleted). hash null: that side deleted the file.
create table workspace_file_conflict (
  id bigserial primary key,
  run_id text not null references run (id),
  path text not null,
  hash text,
  size bigint check (size >= 0),
  mode integer,
  mtime_ms bigint,
  -- The commit that met the conflict: its node and the generation it wrote under.
  committer_node_id text not null,
  committer_generation bigint not null,
  -- Which side lost and is kept here: the committer's change (a fenced writer
  -- yields to the newer holder) or the head entry it replaced (the holder wins).
  side text not null check (side in ('committer', 'head')),
  base_version bigint not null,
  committed_version bigint not null,
  created_at timestamptz not null default now()
);
create index workspace_file_conflict_run_idx on workspace_file_conflict (run_id, id);
