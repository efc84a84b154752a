-- A user's audit events, newest first, a page at a time (`GET /v1/audit`), and the
-- operator's view of everyone's by time (`GET /v1/admin/audit`).
create index audit_event_owner_idx on audit_event (owner_user_id, id desc);
