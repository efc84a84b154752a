"""Background processes: start, list, output from an offset, stdin, signal, wait, follow."""

from __future__ import annotations

import pytest

from memql_workbench import CallerError, FollowedOutput, ProcessEnded, WorkbenchClient

from conftest import wait_until


def test_a_process_takes_stdin_and_its_output_is_read_from_offsets(
    client: WorkbenchClient, run_id: str
) -> None:
    procs = client.processes
    started = procs.start(run_id, "cat; echo done >&2", call_id="proc-1")
    pid = started["processId"]
    assert started["status"] == "running" and started["replayed"] is False
    assert procs.start(run_id, "cat; echo done >&2", call_id="proc-1")["processId"] == pid
    assert procs.start(run_id, "cat; echo done >&2", call_id="proc-1")["replayed"] is True
    assert [p["processId"] for p in procs.list(run_id, running=True)] == [pid]

    assert procs.write(run_id, pid, "hello ") == {"processId": pid, "written": 6, "eof": False}
    assert procs.write(run_id, pid, "world\n", eof=True)["eof"] is True
    ended = procs.wait(run_id, pid, 30_000)
    assert ended["status"] == "exited" and ended["exitCode"] == 0
    assert ended["stdoutBytes"] == 12 and ended["stderrBytes"] == 5
    assert procs.get(run_id, pid) == ended
    assert procs.list(run_id, running=True) == []

    head = procs.output(run_id, pid, max_bytes=6)
    assert (head["data"], head["offset"], head["next"], head["total"]) == ("hello ", 0, 6, 12)
    assert head["complete"] is False
    tail = procs.output(run_id, pid, offset=head["next"])
    assert (tail["data"], tail["next"], tail["complete"]) == ("world\n", 12, True)
    err = procs.output(run_id, pid, stream="stderr", encoding="base64")
    assert err["encoding"] == "base64" and err["data"] == "ZG9uZQo="

    with pytest.raises(CallerError) as not_running:
        procs.write(run_id, pid, "late")
    assert (not_running.value.code, not_running.value.status) == ("process_not_running", 409)


def test_a_process_is_followed_and_re_attached_from_its_offsets(client: WorkbenchClient, run_id: str) -> None:
    procs = client.processes
    pid = procs.start(run_id, "read line; echo got-$line; echo warn >&2")["processId"]
    procs.write(run_id, pid, "one\n")
    follow = procs.follow(run_id, pid)
    out = b""
    for event in follow:
        if isinstance(event, FollowedOutput) and event.stream == "stdout":
            out += event.data
            if out == b"got-one\n":
                break
    follow.close()
    assert follow.stdout_offset == 8 and follow.process is None

    again = procs.follow(run_id, pid, stdout_offset=follow.stdout_offset, stderr_offset=follow.stderr_offset)
    events = list(again)
    assert isinstance(events[-1], ProcessEnded) and events[-1].process["status"] == "exited"
    assert [e.data for e in events if isinstance(e, FollowedOutput) and e.stream == "stdout"] == []
    assert b"".join(e.data for e in events if isinstance(e, FollowedOutput) and e.stream == "stderr") in (
        b"",
        b"warn\n",
    )
    assert again.process is not None and again.process["exitCode"] == 0
    assert procs.output(run_id, pid, stream="stderr")["data"] == "warn\n"


def test_a_process_is_signalled_and_waited_for(client: WorkbenchClient, run_id: str) -> None:
    procs = client.processes
    pid = procs.start(run_id, "echo up; sleep 600")["processId"]
    assert procs.wait(run_id, pid, 0)["status"] == "running", "a wait of 0 answers at once"
    # Signalled once it runs: a signal sent before its process group exists is lost.
    wait_until(lambda: procs.output(run_id, pid)["data"] or None, "the process's first output")
    procs.signal(run_id, pid, "SIGTERM")
    ended = procs.wait(run_id, pid, 30_000)
    assert ended["status"] == "killed" and ended["signal"] == "SIGTERM"
    assert ended["endedAt"] is not None and ended["durationMs"] is not None


def test_a_process_on_a_terminal_is_resized(client: WorkbenchClient, run_id: str) -> None:
    procs = client.processes
    started = procs.start(run_id, "cat", pty={"cols": 80, "rows": 24})
    assert started["pty"] is True
    pid = started["processId"]
    assert procs.resize(run_id, pid, 100, 40)["status"] == "running"
    procs.write(run_id, pid, "typed\n")
    procs.close_input(run_id, pid)
    ended = procs.wait(run_id, pid, 30_000)
    assert ended["status"] == "exited"
    assert "typed" in procs.output(run_id, pid)["data"], "a terminal echoes what is typed"


def test_an_unknown_process_is_not_found(client: WorkbenchClient, run_id: str) -> None:
    with pytest.raises(CallerError) as missing:
        client.processes.get(run_id, "proc-00000000-0000-0000-0000-000000000000")
    assert (missing.value.code, missing.value.status) == ("process_not_found", 404)
