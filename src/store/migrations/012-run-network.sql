-- A run's network policy: the host rules its commands may reach (as written, in their
-- canonical form: `pypi.org`, `*.npmjs.org`, `github.com:443`) and the names of the
-- operator-defined secrets it opts into. Never a secret's value: those live in the
-- nodes' configuration only. Empty, as every run made before, means no network.
alter table run add column egress_allow jsonb not null default '[]'::jsonb;
alter table run add column egress_secrets jsonb not null default '[]'::jsonb;
