-- Worker hosts: `memql worker` processes on users' own machines, the consent a user
-- gives the agent on each, and the record of every call rerouted to one.

-- Every worker host a user has connected, as last seen (what it offered, and when).
create table worker_host (
  owner_user_id text not null,
  worker_id text not null,
  os text not null,
  provides jsonb not null,
  version text not null,
  agent_node_id text not null,
  first_seen_at timestamptz not null default now(),
  connected_at timestamptz not null default now(),
  disconnected_at timestamptz,
  primary key (owner_user_id, worker_id)
);

-- The standing consent of a user: a scope on the ladder none < observe < full per
-- worker, and the kill switch, per worker or, with worker_id '', for every worker of
-- the user (a machine connected later included).
create table worker_consent (
  owner_user_id text not null,
  worker_id text not null,
  scope text not null default 'none' check (scope in ('none', 'observe', 'full')),
  kill_switch boolean not null default false,
  updated_at timestamptz not null default now(),
  primary key (owner_user_id, worker_id)
);

-- Consent requests (the card): raised when a rerouted call needs more scope than the
-- worker holds. No command text or file contents: the summary names the action and
-- the needs only.
create table worker_consent_request (
  id text primary key,
  owner_user_id text not null,
  worker_id text not null,
  run_id text not null,
  action text not null,
  needs jsonb not null,
  required_scope text not null check (required_scope in ('observe', 'full')),
  held_scope text not null check (held_scope in ('none', 'observe', 'full')),
  summary text not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied')),
  decided_scope text check (decided_scope in ('none', 'observe', 'full')),
  created_at timestamptz not null default now(),
  decided_at timestamptz
);
create index worker_consent_request_pending
  on worker_consent_request (owner_user_id, created_at)
  where status = 'pending';

-- The routing record: every call sent to a worker host, so "why did this run on my
-- laptop" is answerable afterwards.
create table worker_invocation (
  id text primary key,
  owner_user_id text not null,
  worker_id text not null,
  run_id text not null,
  action text not null,
  call_id text,
  rerouted_from text not null,
  needs jsonb not null,
  scope text not null check (scope in ('observe', 'full')),
  status text not null default 'running' check (status in ('running', 'succeeded', 'failed', 'lost')),
  error_code text,
  started_at timestamptz not null default now(),
  finished_at timestamptz
);
create index worker_invocation_owner on worker_invocation (owner_user_id, started_at desc);
create index worker_invocation_run on worker_invocation (run_id, started_at);
