-- API tokens get an id, so an operator can list and revoke a user's tokens without
-- ever seeing one. Tokens made before this have the first 16 hex digits of their hash.
alter table api_token add column id text;
update api_token set id = 'tok_' || substr(token_hash, 1, 16) where id is null;
alter table api_token alter column id set not null;
create unique index api_token_id_idx on api_token (id);

-- Operator credentials: what the admin routes accept (managing users' tokens), and
-- nothing else. Only the SHA-256 is kept, as for API tokens; they are made with the
-- agent binary (create-operator-token) and never authenticate an ordinary API call.
create table operator_credential (
  id text primary key,
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  label text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
