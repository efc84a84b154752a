"""Streaming dispatch: an exec's output as it comes, then its result."""

from __future__ import annotations

import json

import pytest

from memql_workbench import (
    OutputChunk,
    PolicyError,
    StreamResult,
    WorkbenchClient,
)
from memql_workbench._ndjson import NdjsonSplitter, dispatch_event

from conftest import wait_until


def test_output_arrives_before_the_result(client: WorkbenchClient, run_id: str) -> None:
    # The command waits until it is cancelled, and the cancel is sent only once its first
    # output has arrived: the result cannot come before that output.
    stream = client.exec_stream(run_id, "echo started; sleep 600", call_id="stream-1")
    events = iter(stream)
    first = next(events)
    assert first == OutputChunk("stdout", b"started\n")
    assert stream.result is None, "no result while the command runs"
    cancel = client.cancel_call(run_id, "stream-1")
    assert cancel["effect"] == "cancelling"
    rest = list(events)
    assert isinstance(rest[-1], StreamResult)
    assert all(isinstance(e, OutputChunk) for e in rest[:-1])
    result = rest[-1].result
    assert result is stream.result
    assert result["ok"] is True
    assert result["payload"]["status"] == "cancelled" and result["payload"]["cancelled"] is True
    assert result["payload"]["stdout"] == "started\n"


def test_the_chunks_add_up_to_the_results_output(client: WorkbenchClient, run_id: str) -> None:
    script = "for i in $(seq 1 200); do echo line-$i; done; echo err >&2; printf 'a\\342\\200\\250b'"
    stdout = b""
    stderr = b""
    with client.exec_stream(run_id, script) as stream:
        for event in stream:
            if isinstance(event, OutputChunk):
                if event.stream == "stdout":
                    stdout += event.data
                else:
                    stderr += event.data
    assert stream.result is not None and stream.result["ok"] is True
    payload = stream.result["payload"]
    assert stdout.decode() == payload["stdout"]
    assert stdout.endswith("a\u2028b".encode()), "a line separator inside a JSON string does not cut the line"
    assert stderr == b"err\n" == payload["stderr"].encode()
    assert payload["exitCode"] == 0


def test_a_stream_of_another_action_is_just_its_result(client: WorkbenchClient, run_id: str) -> None:
    client.fs_write(run_id, "s.txt", "streamed")
    events = list(client.dispatch_stream(run_id, "fs_read", {"path": "s.txt"}))
    assert len(events) == 1 and isinstance(events[0], StreamResult)
    assert events[0].result["ok"] is True and events[0].result["payload"]["content"] == "streamed"


def test_a_refused_stream_is_raised_by_payload(client: WorkbenchClient, run_id: str) -> None:
    stream = client.exec_stream(run_id, "nc -l 80")
    with pytest.raises(PolicyError) as refused:
        stream.payload()
    assert refused.value.code == "command_not_allowed"
    assert stream.result is not None and stream.result["ok"] is False


def test_closing_a_stream_cancels_its_command_only_when_asked(client: WorkbenchClient, run_id: str) -> None:
    kept = client.exec_stream(run_id, "echo kept; sleep 600", call_id="kept")
    assert next(iter(kept)) == OutputChunk("stdout", b"kept\n")
    kept.close()
    assert client.find_command(run_id, "kept")["status"] == "running", "the command belongs to the queue"
    assert client.cancel_call(run_id, "kept")["effect"] == "cancelling"

    dropped = client.exec_stream(
        run_id, "echo dropped; sleep 600", call_id="dropped", cancel_on_disconnect=True
    )
    assert next(iter(dropped)) == OutputChunk("stdout", b"dropped\n")
    dropped.close()
    ended = wait_until(
        lambda: c if (c := client.find_command(run_id, "dropped"))["status"] == "cancelled" else None,
        "cancel of the disconnected command",
    )
    assert ended["cancelled"] is True
    wait_until(
        lambda: True if client.find_command(run_id, "kept")["status"] == "cancelled" else None,
        "cancel of the kept command",
    )


def test_the_splitter_mends_lines_cut_anywhere() -> None:
    lines = [
        json.dumps({"type": "output", "stream": "stdout", "data": "aMOpCg=="}).encode(),
        json.dumps(
            {"type": "result", "result": {"ok": True, "payload": {"s": "\u00e9\u2028"}}}, ensure_ascii=False
        ).encode(),
    ]
    body = b"\n".join(lines) + b"\n"
    for size in (1, 2, 3, 7, len(body)):
        splitter = NdjsonSplitter()
        got: list[bytes] = []
        for start in range(0, len(body), size):
            got += splitter.push(body[start : start + size])
        got += splitter.end()
        assert got == lines
    assert dispatch_event(lines[0]) == OutputChunk("stdout", "hé\n".encode())
    result = dispatch_event(lines[1])
    assert isinstance(result, StreamResult) and result.result["ok"] is True
    assert result.result["payload"] == {"s": "\u00e9\u2028"}
