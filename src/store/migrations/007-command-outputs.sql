-- What became of the expected outputs an exec named, recorded by the statement that
-- finishes the command (with the artifact rows of those promoted): one entry per
-- output, {"path", "artifact": {...}} or {"path", "error": {"code", "message"}}.
-- Null when the command named none, or did not succeed (the answer then says so from
-- the request).
alter table workspace_command add column outputs jsonb;
