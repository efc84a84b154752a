-- A run's workspace history. Every commit of the manifest is a version: one row here,
-- saying when, which node under which generation, and what made it (an action, a
-- command, the sync of background processes, a restore, a fork) with counts of what it
-- changed. A version may carry a label (a checkpoint), which keeps it past retention.
create table workspace_version (
  run_id text not null references workspace_manifest (run_id),
  version bigint not null check (version >= 1),
  created_at timestamptz not null default now(),
  node_id text,
  generation bigint,
  source text not null
    check (source in ('action', 'command', 'process', 'restore', 'fork', 'unrecorded')),
  action text,
  command_id text,
  call_id text,
  -- A restore: the version it made the workspace equal to.
  restored_from bigint,
  -- A fork's first version: the run and version it started from.
  forked_from_run_id text,
  forked_from_version bigint,
  files_added integer not null default 0,
  files_changed integer not null default 0,
  files_removed integer not null default 0,
  label text,
  labelled_at timestamptz,
  primary key (run_id, version)
);
create unique index workspace_version_label on workspace_version (run_id, label)
  where label is not null;

-- The entries a commit replaced or removed, each with the versions it was current in:
-- from `from_version` (the commit that wrote it) up to, not including, `to_version`
-- (the commit that replaced or removed it). With the current entries (workspace_file),
-- they give the manifest at any version still kept.
create table workspace_file_history (
  run_id text not null references workspace_manifest (run_id),
  path text not null,
  hash text not null,
  size bigint not null check (size >= 0),
  mode integer not null,
  mtime_ms bigint not null,
  blob_run_id text,
  from_version bigint not null,
  to_version bigint not null check (to_version > from_version),
  primary key (run_id, path, from_version)
);
create index workspace_file_history_to on workspace_file_history (run_id, to_version);

-- Whose blob an entry's content is: null, the run's own (`runs/<run_id>/blobs/<hash>`);
-- a fork's entries name the run the content was committed in, so a fork copies no blob.
alter table workspace_file add column blob_run_id text;
alter table workspace_file_conflict add column blob_run_id text;

-- The version each manifest was at before versions were recorded: listed, restorable.
insert into workspace_version (run_id, version, created_at, node_id, source)
  select run_id, version, updated_at, updated_by_node, 'unrecorded'
  from workspace_manifest where version >= 1;

-- The version a command's sync left the workspace at, answered with its result.
alter table workspace_command add column workspace_version bigint;
