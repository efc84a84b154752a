"""Worker hosts and consent (reads), workspaces and audit events."""

from __future__ import annotations

import pytest

from memql_workbench import CallerError, WorkbenchClient


def test_worker_hosts_and_consent_are_read(client: WorkbenchClient) -> None:
    workers = client.list_workers()
    assert workers == {"killSwitch": False, "workers": []}
    assert client.list_consent_requests() == []
    assert client.list_consent_requests(status="approved", limit=5) == []
    assert client.list_worker_invocations(limit=10) == []
    with pytest.raises(CallerError) as missing:
        client.get_worker_invocation("inv-unknown")
    assert (missing.value.code, missing.value.status) == ("not_found", 404)


def test_a_call_no_workbench_can_serve_waits_for_a_worker(client: WorkbenchClient, run_id: str) -> None:
    result = client.dispatch(run_id, "fs_list", {}, environment={"needs": ["user_files"]})
    assert result["ok"] is False and result["errorCode"] == "environment_mismatch"
    assert result["payload"]["unmetNeeds"] == ["user_files"]
    assert client.list_consent_requests() == [], "a node without gRPC raises no consent request"


def test_workspaces_and_audit_events_are_read(client: WorkbenchClient, run_id: str) -> None:
    ran = client.exec(run_id, "echo audited")
    live = client.list_workspaces()
    mine = [w for w in live["workspaces"] if w["runId"] == run_id]
    assert len(mine) == 1 and mine[0]["status"] == "provisioned"
    assert client.list_workspaces(limit=1)["workspaces"][0]["runId"] == live["workspaces"][0]["runId"]

    events = client.list_audit(run_id=run_id, type_prefix="workspace_command.")["events"]
    assert events and all(e["eventType"].startswith("workspace_command.") for e in events)
    assert {e["commandId"] for e in events} == {ran["commandId"]}
    assert "audited" not in str(events), "events carry no output"
    page = client.list_audit(run_id=run_id, limit=1)
    assert len(page["events"]) == 1 and page["nextBefore"] is not None
    older = client.list_audit(run_id=run_id, limit=1, before=page["nextBefore"])["events"]
    assert older[0]["id"] < page["events"][0]["id"]

    client.end_run(run_id, "succeeded")
    released = client.list_workspaces(include_released=True)["workspaces"]
    assert [w["status"] for w in released if w["runId"] == run_id] == ["released"]
    assert all(w["runId"] != run_id for w in client.list_workspaces()["workspaces"])
