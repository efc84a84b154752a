-- Evidence for stale recovery that outlives any one node.
--
-- The database's continuity: one row that every live worker's heartbeat touches.
-- `beaten_at` is the last beat; `beaten_since` is when the current unbroken stretch
-- of beats began. A beat that finds the last one older than the gap it allows (a
-- couple of heartbeat intervals: a pause or an outage of the database) starts a new
-- stretch. An old heartbeat of a worker counts as its death only once the database
-- has been beaten without such a gap for longer than the liveness window, so a node
-- that just started can tell a dead worker from an outage everyone lived through.
create table workbench_db_continuity (
  id smallint primary key check (id = 1),
  beaten_since timestamptz not null,
  beaten_at timestamptz not null
);

-- When the command's worker was about to start it (after its workspace was held and
-- reconciled, right before the sandbox). Null: it never started, so a command whose
-- worker is lost, or that was refused before starting, can be queued again instead
-- of being recorded as lost.
alter table workspace_command add column began_at timestamptz;
