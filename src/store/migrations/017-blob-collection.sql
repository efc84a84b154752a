-- Blobs on their way into a manifest: a sync records each blob it is about to put
-- before it puts it, and its commit removes the record. The collector deletes no blob
-- with a fresh record here, and takes each blob's lock (an advisory lock on its key)
-- while it checks and deletes; a sync takes the same lock to record, so a blob is
-- either recorded before the collector looks, or put again after it deleted it.
create table blob_upload (
  blob_run_id text not null,
  hash text not null,
  started_at timestamptz not null default now(),
  primary key (blob_run_id, hash)
);

-- Which entries of other runs (forks) name a run's blobs, for the collector's check
-- and a run's deletion. A run's own entries are found through its primary key.
create index workspace_file_by_blob on workspace_file (blob_run_id, hash)
  where blob_run_id is not null;
create index workspace_file_history_by_blob on workspace_file_history (blob_run_id, hash)
  where blob_run_id is not null;

-- Versions past retention are found by age.
create index workspace_version_by_time on workspace_version (created_at) where label is null;
