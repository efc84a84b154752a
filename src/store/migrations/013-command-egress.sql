-- What a command's network did, for a command that ran with its run's egress:
-- {"refused": [{"host": ..., "port": ..., "reason": ...}]}, the destinations the proxy
-- refused while it ran (each once, capped). Null for a command that had no network.
alter table workspace_command add column egress jsonb;
