-- A call's idempotency key (`callId`): one row per key and run, whatever the action,
-- so a key names one call. `digest` is the SHA-256 of the call's action, arguments and
-- environment hint: the same key with another digest is a different call and is
-- refused. An `exec` or `build` names its command (its outcome is the command's); a
-- file action keeps its answer in `outcome` once it has one.
create table workbench_call (
  run_id text not null,
  call_id text not null,
  action text not null,
  -- Null for keys recorded before digests were: such a key replays as it always did.
  digest text,
  command_id text,
  outcome jsonb,
  node_id text,
  created_at timestamptz not null default now(),
  answered_at timestamptz,
  primary key (run_id, call_id)
);

insert into workbench_call (run_id, call_id, action, command_id, created_at, answered_at)
select run_id, call_id, 'exec', id, queued_at, finished_at
from workspace_command where call_id is not null
on conflict do nothing;
