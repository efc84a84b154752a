-- API tokens get a kind. An agent token is what a tool loop, the MCP server or the CLI
-- in a tool loop holds: it calls actions, reads consent requests and workers, and may
-- turn the kill switch on. A person token is the user's own credential (the console,
-- the CLI in the user's shell): it also approves and denies consent requests, raises a
-- worker's standing scope and turns the kill switch off. Tokens made before kinds
-- existed are agent tokens, and keep working for every call an agent may make.
alter table api_token add column kind text not null default 'agent'
  check (kind in ('agent', 'person'));
