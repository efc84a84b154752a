-- Bearer tokens of the HTTP API. Only the SHA-256 of a token is kept: the plaintext
-- is shown once, when it is made, and a leaked table does not authenticate anyone.
create table api_token (
  token_hash text primary key check (token_hash ~ '^[0-9a-f]{64}$'),
  user_id text not null,
  label text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_token_user_idx on api_token (user_id);
