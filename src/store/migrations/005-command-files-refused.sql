-- Workspace entries a command left that its sync could not keep (a tree deeper than
-- PATH_MAX, say): {"total": n, "entries": [{"path": ..., "reason": ...}]}, the paths
-- shortened and the list capped. Null when there were none.
alter table workspace_command add column files_refused jsonb;
