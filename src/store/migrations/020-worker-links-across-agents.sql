-- Agent replicas are peers for worker hosts: a worker connected to one serves calls
-- that arrive at another, which forwards them over the mesh to the agent holding the
-- worker's stream. The row says where that agent listens for its peers
-- (MEMQL_GRPC_ADVERTISE), and when it last vouched for the stream (every few seconds
-- while the stream is up), so a link whose agent died without a word goes stale.
alter table worker_host add column agent_address text;
alter table worker_host add column seen_at timestamptz not null default now();

-- Where a rerouted call's consent gate ran, and which agent's link to the worker it
-- was sent through (the same node, or a peer replica).
alter table worker_invocation add column decided_by text;
alter table worker_invocation add column link_node_id text;
