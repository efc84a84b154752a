-- A command's place in the queue, as a time: claims take queued commands in the order
-- of their places (then arrival, then id). A run's first command stands at its arrival;
-- a later command of the run stands where its run's previous command stood, but never
-- more than the follow-up lead (MEMQL_QUEUE_FOLLOW_UP_LEAD_MS) before its own arrival,
-- so a run's next command does not wait behind every other run's first, and no command
-- is passed by one that arrived more than the lead after it (see `command-place.ts`).
-- Rows already there stand at the time of this migration (their previous place only
-- matters for the next command of their run); queued and running rows at their arrival.
alter table workspace_command add column queue_place timestamptz not null default now();
update workspace_command set queue_place = queued_at where status in ('queued', 'running');
drop index workspace_command_queued_idx;
create index workspace_command_queued_idx on workspace_command (queue_place, queued_at, id)
  where status = 'queued';

-- Retention of finished commands (MEMQL_COMMAND_KEEP_MS): the sweep takes the oldest
-- finished rows a bounded batch at a time, a range scan of this index. Queued and
-- running rows have no finish time, so they are never in it.
create index workspace_command_finished_idx on workspace_command (finished_at)
  where finished_at is not null;
