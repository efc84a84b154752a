"""A workspace's history: list, diff, checkpoint, restore, fork, manifest."""

from __future__ import annotations

import hashlib

import pytest

from memql_workbench import CallerError, WorkbenchClient


def test_versions_are_listed_compared_restored_and_forked(client: WorkbenchClient, run_id: str) -> None:
    versions = client.versions
    one = client.fs_write(run_id, "doc.txt", "first\n")["version"]
    client.fs_write(run_id, "keep.txt", "kept\n")
    base = versions.checkpoint(run_id, "base")
    assert base["label"] == "base" and base["version"] == one + 1
    client.exec(run_id, "printf 'second\\n' > doc.txt && rm keep.txt")

    listed = versions.list(run_id)
    assert listed["current"] == one + 2 and listed["next"] is None
    newest = listed["versions"][0]
    assert newest["source"] == "command" and newest["commandId"] is not None
    assert (newest["changed"], newest["removed"]) == (1, 1)
    assert [v["version"] for v in listed["versions"]] == [one + 2, one + 1, one]
    assert [v["label"] for v in versions.list(run_id, labelled=True)["versions"]] == ["base"]
    page = versions.list(run_id, limit=1)
    assert len(page["versions"]) == 1 and page["next"] == one + 2
    assert [v["version"] for v in versions.list(run_id, before=page["next"])["versions"]] == [one + 1, one]

    diff = versions.diff(run_id, one + 1)
    assert (diff["from"], diff["to"], diff["changed"], diff["removed"]) == (one + 1, one + 2, 1, 1)
    by_path = {e["path"]: e for e in diff["entries"]}
    assert by_path["doc.txt"]["change"] == "changed"
    changed_from = by_path["doc.txt"]["from"]
    assert changed_from is not None and changed_from["hash"] == hashlib.sha256(b"first\n").hexdigest()
    assert by_path["keep.txt"]["change"] == "removed" and by_path["keep.txt"]["to"] is None
    assert versions.diff(run_id, one, to=one + 1)["added"] == 1

    restored = versions.restore(run_id, label="base", call_id="restore-1")
    assert restored["restoredFrom"] == one + 1 and restored["version"] == one + 3
    assert client.fs_read(run_id, "doc.txt")["content"] == "first\n"
    assert client.fs_read(run_id, "keep.txt")["content"] == "kept\n"
    assert versions.list(run_id, limit=1)["versions"][0]["restoredFrom"] == one + 1

    manifest = versions.manifest(run_id, version=one + 2)
    assert [f["path"] for f in manifest["files"]] == ["doc.txt"] and manifest["next"] is None
    assert manifest["files"][0]["sha256"] == hashlib.sha256(b"second\n").hexdigest()

    fork = versions.fork(run_id, version=one, conversation_id="forked")
    try:
        assert fork["forkedFrom"] == {"runId": run_id, "version": one} and fork["files"] == 1
        assert fork["run"]["conversationId"] == "forked"
        assert client.fs_read(fork["run"]["id"], "doc.txt")["content"] == "first\n"
        with pytest.raises(CallerError):
            client.fs_read(fork["run"]["id"], "keep.txt")
    finally:
        client.end_run(fork["run"]["id"], "succeeded")
        client.delete_run(fork["run"]["id"])

    assert versions.remove_checkpoint(run_id, "base")["label"] is None
    assert versions.list(run_id, labelled=True)["versions"] == []


def test_history_refusals(client: WorkbenchClient, run_id: str) -> None:
    client.fs_write(run_id, "a.txt", "a")
    client.fs_write(run_id, "a.txt", "b")
    client.versions.checkpoint(run_id, "taken", version=1)
    with pytest.raises(CallerError) as in_use:
        client.versions.checkpoint(run_id, "taken", version=2)
    assert in_use.value.code == "label_in_use"
    with pytest.raises(CallerError) as missing:
        client.versions.restore(run_id, version=99)
    assert (missing.value.code, missing.value.status) == ("version_not_found", 404)
    with pytest.raises(ValueError):
        client.versions.restore(run_id)
