"""Commands by id and by the callId of the call that queued them: get, output, cancel."""

from __future__ import annotations

import pytest

from memql_workbench import CallerError, OutputChunk, WorkbenchClient


def test_a_command_is_read_by_id_and_by_call_id(client: WorkbenchClient, run_id: str) -> None:
    ran = client.exec(run_id, "printf 'out\\n'; printf '\\377\\376' >&2; exit 4", call_id="cmd-1")
    command = client.get_command(ran["commandId"])
    assert command["id"] == ran["commandId"] and command["runId"] == run_id
    assert command["callId"] == "cmd-1"
    assert command["status"] == "completed" and command["exitCode"] == 4
    assert command["stdout"] == "out\n"
    assert command.get("stderrEncoding") == "base64", "output that is not text comes as base64"

    output = client.command_output(ran["commandId"])
    assert (output.stdout, output.stderr) == (b"out\n", b"\xff\xfe")
    assert output.stdout_truncated is False
    assert client.find_command(run_id, "cmd-1") == command
    with pytest.raises(CallerError) as none:
        client.find_command(run_id, "never-sent")
    assert none.value.code == "not_found"


def test_a_runs_commands_are_listed_newest_first_in_pages(client: WorkbenchClient, run_id: str) -> None:
    ids = [client.exec(run_id, f"echo {i}", call_id=f"page-{i}")["commandId"] for i in range(3)]
    first = client.list_commands(run_id, limit=2)
    assert [c["id"] for c in first["commands"]] == [ids[2], ids[1]]
    assert "stdout" not in first["commands"][0], "the list leaves output out"
    assert first["nextBefore"] is not None
    second = client.list_commands(run_id, limit=2, before=first["nextBefore"])
    assert [c["id"] for c in second["commands"]] == [ids[0]] and second["nextBefore"] is None
    assert [c["callId"] for c in client.iter_commands(run_id)] == ["page-2", "page-1", "page-0"]
    assert [c["id"] for c in client.iter_commands(run_id, status="completed")] == list(reversed(ids))
    assert list(client.iter_commands(run_id, status="failed")) == []


def test_a_running_command_is_cancelled_by_id(client: WorkbenchClient, run_id: str) -> None:
    stream = client.exec_stream(run_id, "echo go; sleep 600", call_id="to-cancel")
    assert next(iter(stream)) == OutputChunk("stdout", b"go\n")
    command = client.find_command(run_id, "to-cancel")
    assert command["status"] == "running"
    cancelled = client.cancel_command(command["id"])
    assert cancelled["effect"] == "cancelling"
    assert stream.payload()["status"] == "cancelled"
    assert client.get_command(command["id"])["cancelled"] is True
    again = client.cancel_command(command["id"])
    assert again["effect"] == "ended" and again["command"]["status"] == "cancelled"
    assert client.cancel_call(run_id, "to-cancel")["effect"] == "ended"


def test_unknown_commands_and_calls_are_not_found(client: WorkbenchClient, run_id: str) -> None:
    with pytest.raises(CallerError) as by_id:
        client.get_command("00000000-0000-0000-0000-000000000000")
    assert (by_id.value.code, by_id.value.status) == ("not_found", 404)
    with pytest.raises(CallerError) as by_call:
        client.cancel_call(run_id, "no-such-call")
    assert (by_call.value.code, by_call.value.status) == ("not_found", 404)
