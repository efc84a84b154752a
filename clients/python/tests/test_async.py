"""The async client, group by group: runs, actions, streaming, files, commands, errors,
processes, versions, workers."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from collections.abc import AsyncIterator

import pytest

from memql_workbench import (
    AsyncWorkbenchClient,
    CallerError,
    DependencyError,
    FollowedOutput,
    OutputChunk,
    PolicyError,
    ProcessEnded,
    StreamResult,
)

MIB = 1024 * 1024


async def test_runs(aclient: AsyncWorkbenchClient) -> None:
    run = await aclient.create_run(conversation_id="async-runs")
    assert await aclient.get_run(run["id"]) == run
    assert run["id"] in [r["id"] async for r in aclient.iter_runs(status="running", page_size=2)]
    assert (await aclient.list_runs(limit=1))["runs"][0]["id"] == run["id"]
    assert (await aclient.set_run_network(run["id"], []))["network"]["allow"] == []
    assert (await aclient.end_run(run["id"], "abandoned"))["run"]["status"] == "abandoned"
    assert (await aclient.delete_run(run["id"]))["commands"] == 0
    assert (await aclient.me())["tokenKind"] == "agent"
    assert (await aclient.ready())["ready"] is True
    assert (await aclient.health()) == {"ok": True}
    assert (await aclient.fleet())["mode"] == "local"
    assert {t["kind"] for t in await aclient.list_tokens()} >= {"agent", "person"}


async def test_actions_and_the_tool_function(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    assert (await aclient.fs_write(arun_id, "a/b.txt", b"\x00\x01bytes"))["size"] == 7
    read = await aclient.fs_read(arun_id, "a/b.txt", encoding="base64")
    assert read["content"] == "AAFieXRlcw=="
    assert [e["path"] for e in (await aclient.fs_list(arun_id, "a"))["entries"]] == ["a/b.txt"]
    ran = await aclient.exec(arun_id, "wc -c < a/b.txt; exit 2", call_id="async-exec")
    assert (ran["stdout"].strip(), ran["exitCode"]) == ("7", 2)
    assert (
        await aclient.dispatch(arun_id, "exec", {"command": "wc -c < a/b.txt; exit 2"}, call_id="async-exec")
    )["payload"]["commandId"] == ran["commandId"]
    promoted = await aclient.promote_artifact(arun_id, "a/b.txt")
    assert b"".join([c async for c in aclient.iter_artifact(promoted["artifactId"])]) == b"\x00\x01bytes"
    assert (await aclient.fs_delete(arun_id, "a", recursive=True))["deleted"] is True
    with pytest.raises(PolicyError):
        await aclient.fetch(arun_id, "http://127.0.0.1:9/", "x")

    host = aclient.workbench_host(arun_id)
    missing = await host.run_tool_call('{"action": "fs_read", "args": {"path": "a/b.txt"}}', call_id="t-1")
    assert missing["ok"] is False and missing["errorCode"] == "path_not_found"
    bad = await host("fs_list", {"limit": 0})
    assert bad["ok"] is False and bad["errorCode"] == "invalid_arguments"


async def test_streaming_output_arrives_before_the_result(
    aclient: AsyncWorkbenchClient, arun_id: str
) -> None:
    events: list[object] = []
    async with aclient.exec_stream(arun_id, "echo started; sleep 600", call_id="async-stream") as stream:
        async for event in stream:
            events.append(event)
            if event == OutputChunk("stdout", b"started\n"):
                assert (await aclient.cancel_call(arun_id, "async-stream"))["effect"] == "cancelling"
    assert events[0] == OutputChunk("stdout", b"started\n")
    last = events[-1]
    assert isinstance(last, StreamResult) and last.result["ok"] is True
    assert last.result["payload"]["status"] == "cancelled"
    assert (await aclient.find_command(arun_id, "async-stream"))["cancelled"] is True
    assert (await aclient.exec_stream(arun_id, "echo done").payload())["stdout"] == "done\n"


async def test_a_21_mib_file_round_trip(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    digest = hashlib.sha256()
    size = 21 * MIB + 7

    async def chunks() -> AsyncIterator[bytes]:
        left = size
        while left:
            data = os.urandom(min(left, MIB))
            digest.update(data)
            left -= len(data)
            yield data
            await asyncio.sleep(0)

    written = await aclient.upload_file(arun_id, "big.bin", chunks(), size=size)
    assert written["size"] == size
    sink = io.BytesIO()
    got = await aclient.download_file(arun_id, "big.bin", sink)
    assert (got.bytes, got.sha256) == (size, digest.hexdigest())
    assert hashlib.sha256(sink.getvalue()).hexdigest() == digest.hexdigest()
    total = 0
    async for part in aclient.iter_file(arun_id, "big.bin", chunk_size=4 * MIB):
        assert len(part) <= 4 * MIB
        total += len(part)
    assert total == size


async def test_commands(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    ran = await aclient.exec(arun_id, "echo out; echo err >&2", call_id="async-cmd")
    assert (await aclient.get_command(ran["commandId"]))["callId"] == "async-cmd"
    output = await aclient.command_output(ran["commandId"])
    assert (output.stdout, output.stderr) == (b"out\n", b"err\n")
    assert [c["id"] async for c in aclient.iter_commands(arun_id)] == [ran["commandId"]]
    assert (await aclient.list_commands(arun_id, status="completed"))["commands"][0]["id"] == ran["commandId"]
    assert (await aclient.cancel_command(ran["commandId"]))["effect"] == "ended"


async def test_errors(aclient: AsyncWorkbenchClient, arun_id: str, url: str) -> None:
    with pytest.raises(CallerError) as missing:
        await aclient.fs_read(arun_id, "missing.txt")
    assert (missing.value.code, missing.value.status) == ("path_not_found", None)
    with pytest.raises(CallerError) as not_found:
        await aclient.get_artifact("art-unknown")
    assert (not_found.value.code, not_found.value.status) == ("not_found", 404)
    async with AsyncWorkbenchClient(url, "mqt_wrong") as stranger:
        with pytest.raises(PolicyError) as refused:
            await stranger.me()
    assert (refused.value.code, refused.value.status) == ("unauthenticated", 401)
    async with AsyncWorkbenchClient("http://127.0.0.1:1", "t") as nobody:
        with pytest.raises(DependencyError) as down:
            await nobody.list_runs()
    assert down.value.code == "unavailable"
    with pytest.raises(CallerError) as upload:
        await aclient.upload_file(arun_id, "../x", b"x")
    assert (upload.value.code, upload.value.status) == ("invalid_path", 400)


async def test_processes(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    procs = aclient.processes
    pid = (await procs.start(arun_id, "cat"))["processId"]
    assert [p["processId"] for p in await procs.list(arun_id, running=True)] == [pid]
    await procs.write(arun_id, pid, "async\n", eof=True)
    follow = procs.follow(arun_id, pid)
    out = b""
    async for event in follow:
        if isinstance(event, FollowedOutput):
            out += event.data
        else:
            assert isinstance(event, ProcessEnded) and event.process["status"] == "exited"
    assert out == b"async\n" and follow.stdout_offset == 6
    assert (await procs.output(arun_id, pid, offset=2))["data"] == "ync\n"
    assert (await procs.get(arun_id, pid))["exitCode"] == 0

    sleeper = (await procs.start(arun_id, "echo up; sleep 600"))["processId"]
    async with procs.follow(arun_id, sleeper) as running:  # signalled once it runs
        assert await running.__anext__() == FollowedOutput("stdout", 0, b"up\n")
    await procs.signal(arun_id, sleeper, "SIGKILL")
    ended = await procs.wait(arun_id, sleeper, 30_000)
    assert ended["signal"] == "SIGKILL", ended


async def test_versions(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    await aclient.fs_write(arun_id, "v.txt", "one")
    await aclient.versions.checkpoint(arun_id, "one")
    await aclient.fs_write(arun_id, "v.txt", "two")
    listed = await aclient.versions.list(arun_id)
    assert listed["current"] == 2 and listed["versions"][1]["label"] == "one"
    assert (await aclient.versions.diff(arun_id, 1))["changed"] == 1
    assert (await aclient.versions.restore(arun_id, label="one"))["restoredFrom"] == 1
    assert (await aclient.fs_read(arun_id, "v.txt"))["content"] == "one"
    assert [f["path"] for f in (await aclient.versions.manifest(arun_id))["files"]] == ["v.txt"]
    fork = await aclient.versions.fork(arun_id, version=2)
    assert (await aclient.fs_read(fork["run"]["id"], "v.txt"))["content"] == "two"
    await aclient.end_run(fork["run"]["id"], "succeeded")
    await aclient.delete_run(fork["run"]["id"])
    assert (await aclient.versions.remove_checkpoint(arun_id, "one"))["version"] == 1


async def test_workers_and_reads(aclient: AsyncWorkbenchClient, arun_id: str) -> None:
    assert (await aclient.list_workers())["workers"] == []
    assert await aclient.list_consent_requests(status="denied") == []
    assert await aclient.list_worker_invocations(run_id=arun_id) == []
    await aclient.fs_write(arun_id, "w.txt", "w")
    assert any(w["runId"] == arun_id for w in (await aclient.list_workspaces())["workspaces"])
    assert (await aclient.list_audit(run_id=arun_id))["events"]
    assert await aclient.list_artifacts(arun_id) == []
