-- Why a background process ended without its own doing, as the stable error code its
-- answers carry: its replica was lost (process_lost), its replica shut down
-- (node_stopping), or it ran the node's maximum lifetime and was killed
-- (process_lifetime). Null when it exited, or a signal someone sent ended it.
alter table workspace_process add column error_code text
  check (error_code in ('process_lost', 'node_stopping', 'process_lifetime'));
update workspace_process set error_code = case status
  when 'lost' then 'process_lost'
  when 'node_stopping' then 'node_stopping'
end;
