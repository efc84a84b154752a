-- The rest of what a command's executor reports, kept on the row so a caller that
-- lost its connection reads the whole result back by command id.
alter table workspace_command
  add column signal text,
  add column oom_killed boolean not null default false,
  add column exec_duration_ms integer check (exec_duration_ms >= 0);
