"""Runs (create, get, list with paging, end, delete, network), tokens, and the node's reads."""

from __future__ import annotations

import pytest

from memql_workbench import CallerError, PolicyError, WorkbenchClient


def test_a_run_is_created_read_ended_and_deleted(client: WorkbenchClient) -> None:
    run = client.create_run(conversation_id="conv-1", retention_ms=3_600_000)
    assert run["id"].startswith("run-")
    assert run["status"] == "running"
    assert run["ownerUserId"] == "dev"
    assert run["conversationId"] == "conv-1"
    assert run["retentionExpiresAt"] is not None
    assert run["network"] == {"allow": [], "secrets": []}
    assert client.get_run(run["id"]) == run
    client.fs_write(run["id"], "a.txt", "a")  # the run's workspace, which ending it releases

    ended = client.end_run(run["id"], "succeeded")
    assert ended["run"]["status"] == "succeeded"
    assert ended["run"]["endedAt"] is not None
    assert ended["released"] is True
    assert client.end_run(run["id"], "succeeded")["released"] is False, "the same status again is a no-op"
    with pytest.raises(CallerError) as refused:
        client.end_run(run["id"], "failed")
    assert (refused.value.code, refused.value.status) == ("run_ended", 409)

    deleted = client.delete_run(run["id"])
    assert deleted["workspaces"] == 1 and deleted["commands"] == 0
    with pytest.raises(CallerError) as gone:
        client.get_run(run["id"])
    assert (gone.value.code, gone.value.status) == ("not_found", 404)


def test_runs_are_listed_newest_first_a_page_at_a_time(client: WorkbenchClient) -> None:
    made = [client.create_run(conversation_id=f"page-{i}")["id"] for i in range(3)]
    try:
        seen: list[str] = []
        before: str | None = None
        pages = 0
        while True:
            page = client.list_runs(limit=2, before=before)
            assert len(page["runs"]) <= 2
            seen += [r["id"] for r in page["runs"]]
            pages += 1
            before = page["nextBefore"]
            if before is None:
                break
        assert pages >= 2
        assert len(seen) == len(set(seen)), "paging never repeats a run"
        mine = [r for r in seen if r in made]
        assert mine == list(reversed(made)), "newest first"
        assert [r["id"] for r in client.iter_runs(page_size=2) if r["id"] in made] == mine

        client.end_run(made[0], "cancelled")
        running = [r["id"] for r in client.iter_runs(status="running")]
        assert made[0] not in running and made[1] in running
        cancelled = [r["id"] for r in client.iter_runs(status="cancelled")]
        assert made[0] in cancelled
    finally:
        for run_id in made:
            client.end_run(run_id, "cancelled")
            client.delete_run(run_id)


def test_a_runs_network_is_replaced_within_the_ceiling(client: WorkbenchClient, run_id: str) -> None:
    assert client.set_run_network(run_id, [])["network"] == {"allow": [], "secrets": []}
    with pytest.raises(PolicyError) as refused:
        client.set_run_network(run_id, ["pypi.org"])
    assert (refused.value.code, refused.value.status) == ("egress_not_allowed", 403)
    assert "pypi.org" in refused.value.message
    assert client.get_run(run_id)["network"]["allow"] == [], "a refused change changes nothing"


def test_the_token_says_who_it_is_and_lists_its_users_tokens(client: WorkbenchClient) -> None:
    assert client.me() == {"userId": "dev", "tokenKind": "agent"}
    tokens = client.list_tokens()
    assert {t["kind"] for t in tokens} >= {"agent", "person"}
    assert all("secret" not in t for t in tokens)
    with pytest.raises(PolicyError) as refused:
        client.revoke_token(tokens[0]["id"])
    assert (refused.value.code, refused.value.status) == ("person_required", 403)
    assert [t["revokedAt"] for t in client.list_tokens()] == [t["revokedAt"] for t in tokens]


def test_a_person_token_is_a_person(url: str, person_token: str) -> None:
    with WorkbenchClient(url, person_token) as person:
        assert person.me() == {"userId": "dev", "tokenKind": "person"}


def test_the_node_answers_health_readiness_and_its_fleet(client: WorkbenchClient) -> None:
    assert client.health() == {"ok": True}
    ready = client.ready()
    assert ready["ready"] is True
    assert set(ready["checks"]) == {"database", "workbench"}
    assert all(check["ok"] for check in ready["checks"].values())
    fleet = client.fleet()
    assert fleet["mode"] == "local"
    assert len(fleet["replicas"]) == 1 and fleet["replicas"][0]["healthy"] is True
