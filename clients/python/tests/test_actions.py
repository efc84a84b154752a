"""The workbenchHost actions, typed and through the generic dispatch, with callIds."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest

from memql_workbench import (
    TOOL_ACTION_NAMES,
    CallerError,
    PolicyError,
    WorkbenchClient,
    WorkbenchEnvironmentError,
    workbench_tool_definition,
)


def test_files_are_written_read_appended_and_read_in_ranges(client: WorkbenchClient, run_id: str) -> None:
    written = client.fs_write(run_id, "notes/a.txt", "héllo\n")
    assert written["path"] == "notes/a.txt"
    assert written["bytesWritten"] == len("héllo\n".encode()) == written["size"]
    assert written["version"] >= 1
    client.fs_write(run_id, "notes/a.txt", "world\n", append=True)
    read = client.fs_read(run_id, "notes/a.txt")
    assert read["content"] == "héllo\nworld\n"
    assert read["encoding"] == "utf8" and read["eof"] is True
    assert read["size"] == len("héllo\nworld\n".encode())

    part = client.fs_read(run_id, "notes/a.txt", offset=7, length=5)
    assert part["content"] == "world" and part["bytesRead"] == 5 and part["eof"] is False


def test_bytes_go_in_and_come_back_as_they_are(client: WorkbenchClient, run_id: str) -> None:
    data = bytes(range(256)) * 4
    assert client.fs_write(run_id, "bin/all.bytes", data, mode="600")["size"] == len(data)
    read = client.fs_read(run_id, "bin/all.bytes")
    assert read["encoding"] == "base64" and read.get("binary") is True
    assert base64.b64decode(read["content"]) == data
    as_base64 = client.fs_read(run_id, "bin/all.bytes", encoding="base64", offset=256, length=256)
    assert base64.b64decode(as_base64["content"]) == bytes(range(256))
    assert client.exec(run_id, "stat -c %a bin/all.bytes")["stdout"] == "600\n"


def test_directories_are_listed_and_deleted(client: WorkbenchClient, run_id: str) -> None:
    client.fs_write(run_id, "tree/a.txt", "a")
    client.fs_write(run_id, "tree/sub/b.txt", "bb")
    top = client.fs_list(run_id, "tree")
    assert {(e["path"], e["type"]) for e in top["entries"]} == {
        ("tree/a.txt", "file"),
        ("tree/sub", "directory"),
    }
    assert top["truncated"] is False
    deep = client.fs_list(run_id, "tree", recursive=True)
    sizes = {e["path"]: e["size"] for e in deep["entries"] if e["type"] == "file"}
    assert sizes == {"tree/a.txt": 1, "tree/sub/b.txt": 2}
    assert client.fs_list(run_id, "tree", recursive=True, limit=1)["truncated"] is True

    assert client.fs_delete(run_id, "tree/a.txt") == {
        "path": "tree/a.txt",
        "deleted": True,
        "type": "file",
        "version": client.versions.list(run_id)["current"],
    }
    with pytest.raises(CallerError) as missing:
        client.fs_read(run_id, "tree/a.txt")
    assert missing.value.code == "path_not_found" and missing.value.status is None
    assert missing.value.payload == {"path": "tree/a.txt"}
    assert client.fs_delete(run_id, "tree", recursive=True)["type"] == "directory"
    assert [e["path"] for e in client.fs_list(run_id)["entries"]] == []


def test_exec_answers_output_exit_code_and_expected_outputs(client: WorkbenchClient, run_id: str) -> None:
    ran = client.exec(run_id, 'echo "$GREETING from $(pwd)"; echo oops >&2; exit 3', env={"GREETING": "hi"})
    assert ran["stdout"] == "hi from /workspace\n"
    assert ran["stderr"] == "oops\n"
    assert ran["exitCode"] == 3 and ran["status"] == "completed"
    assert ran["commandId"]

    client.fs_write(run_id, "in/data.txt", "3\n1\n2\n")
    sorted_ = client.exec(run_id, "sort data.txt", cwd="in")
    assert sorted_["stdout"] == "1\n2\n3\n" and sorted_["exitCode"] == 0
    assert client.exec(run_id, "wc -l", stdin="a\nb\n")["stdout"].strip() == "2"

    made = client.exec(
        run_id,
        "mkdir -p out && printf 'report\\n' > out/report.md",
        outputs=[
            {"path": "out/report.md", "name": "report.md", "contentType": "text/markdown"},
            {"path": "out/missing.md"},
        ],
    )
    outputs = made.get("outputs", [])
    assert [o["path"] for o in outputs] == ["out/report.md", "out/missing.md"]
    artifact = outputs[0]["artifact"]
    assert artifact["sha256"] == hashlib.sha256(b"report\n").hexdigest()
    assert outputs[1]["error"]["code"] == "path_not_found"
    assert b"".join(client.iter_artifact(artifact["artifactId"])) == b"report\n"


def test_exec_refusals_are_raised_by_category(client: WorkbenchClient, run_id: str) -> None:
    with pytest.raises(PolicyError) as refused:
        client.exec(run_id, "nc -l 80")
    assert refused.value.code == "command_not_allowed" and refused.value.status is None
    assert refused.value.payload["name"] == "nc"
    with pytest.raises(WorkbenchEnvironmentError) as mismatch:
        client.fs_read(run_id, "x", environment={"needs": ["gpu"]})
    assert mismatch.value.code == "environment_mismatch"
    assert mismatch.value.payload == {"unmetNeeds": ["gpu"]}


def test_fetch_is_refused_for_a_loopback_address(client: WorkbenchClient, run_id: str) -> None:
    with pytest.raises(PolicyError) as blocked:
        client.fetch(run_id, "http://127.0.0.1:9/", "page.html")
    assert blocked.value.code == "fetch_blocked"
    assert blocked.value.payload["category"] == "loopback"
    with pytest.raises(CallerError) as bad:
        client.fetch(run_id, "ftp://example.com/x", "x")
    assert bad.value.code == "invalid_arguments"


def test_a_promoted_file_is_an_artifact_that_outlives_the_run(client: WorkbenchClient, run_id: str) -> None:
    client.fs_write(run_id, "report.md", "# Report\n\nAll good.\n")
    promoted = client.promote_artifact(run_id, "report.md", name="Report.md", content_type="text/markdown")
    assert promoted["name"] == "Report.md" and promoted["contentType"] == "text/markdown"
    assert promoted["sha256"] == hashlib.sha256(b"# Report\n\nAll good.\n").hexdigest()
    listed = client.list_artifacts(run_id)
    assert [a["id"] for a in listed] == [promoted["artifactId"]]
    assert client.get_artifact(promoted["artifactId"]) == listed[0]
    client.end_run(run_id, "succeeded")
    sink = io.BytesIO()
    got = client.download_artifact(promoted["artifactId"], sink)
    assert (got.bytes, got.sha256) == (promoted["size"], promoted["sha256"])
    assert sink.getvalue() == b"# Report\n\nAll good.\n"


def test_a_call_id_names_one_call(client: WorkbenchClient, run_id: str) -> None:
    first = client.dispatch(run_id, "exec", {"command": "echo once"}, call_id="call-exec-1")
    again = client.dispatch(run_id, "exec", {"command": "echo once"}, call_id="call-exec-1")
    assert first["ok"] is True and again["ok"] is True
    assert again["payload"]["commandId"] == first["payload"]["commandId"], "the recorded outcome, not a rerun"
    assert client.list_commands(run_id)["commands"][0]["callId"] == "call-exec-1"
    assert len(client.list_commands(run_id)["commands"]) == 1

    conflict = client.dispatch(run_id, "exec", {"command": "echo twice"}, call_id="call-exec-1")
    assert conflict["ok"] is False and conflict["errorCode"] == "call_id_conflict"
    assert conflict["payload"]["recordedAction"] == "exec"
    with pytest.raises(CallerError) as raised:
        client.fs_write(run_id, "x.txt", "x", call_id="call-exec-1")
    assert raised.value.code == "call_id_conflict"


def test_the_tool_function_hands_refusals_back_as_results(client: WorkbenchClient, run_id: str) -> None:
    host = client.workbench_host(run_id, agent_id="model-1")
    wrote = host.run_tool_call(
        json.dumps({"action": "fs_write", "args": {"path": "r.md", "content": "ok"}}), call_id="t1"
    )
    assert wrote["ok"] is True and wrote["payload"]["size"] == 2
    missing = host("fs_read", {"path": "missing.md"}, call_id="t2")
    assert missing["ok"] is False and missing["errorCode"] == "path_not_found"
    unknown = host.run_tool_call({"action": "fs_read", "args": {"path": "r.md", "bogus": 1}})
    assert unknown["ok"] is False and unknown["errorCode"] == "invalid_arguments"
    assert unknown["payload"]["problems"] == [{"field": "args.bogus", "problem": "unknown key"}]
    not_json = host.run_tool_call("{not json", call_id="t3")
    assert not_json["ok"] is False and not_json["errorCode"] == "invalid_arguments"
    build = host("build", {})
    assert build["ok"] is False and build["errorCode"] == "build_not_permitted"


def test_the_tool_definition_is_the_contracts() -> None:
    tool = workbench_tool_definition()
    assert tool["name"] == "workbenchHost"
    assert tool["parameters"]["type"] == "object"
    assert tuple(tool["parameters"]["properties"]["action"]["enum"]) == TOOL_ACTION_NAMES
    assert "build" not in tool["parameters"]["properties"]["action"]["enum"]
