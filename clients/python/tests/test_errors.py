"""Errors: one class per category of the contract's codes, each with code, message, status, payload."""

from __future__ import annotations

import socket

import pytest

from memql_workbench import (
    ERROR_CODES,
    CallerError,
    DependencyError,
    InternalError,
    PolicyError,
    WorkbenchClient,
    WorkbenchEnvironmentError,
    WorkbenchError,
    error_class,
    error_from_failure,
)
from memql_workbench.errors import CATEGORY_CLASSES, error_from_response


def test_every_code_is_raised_as_its_categorys_class() -> None:
    expected = {
        "caller": CallerError,
        "policy": PolicyError,
        "environment": WorkbenchEnvironmentError,
        "dependency": DependencyError,
        "internal": InternalError,
    }
    assert expected == CATEGORY_CLASSES
    for code, (category, meaning) in ERROR_CODES.items():
        cls = error_class(code)
        assert cls is expected[category] and cls.category == category
        assert issubclass(cls, WorkbenchError) and meaning
    assert error_class("a_code_from_a_newer_node") is WorkbenchError
    assert error_class("person_required") is PolicyError
    assert error_class("no_sandbox") is WorkbenchEnvironmentError
    assert not issubclass(WorkbenchEnvironmentError, OSError), "not Python's EnvironmentError"


def test_refusals_are_read_from_results_and_answers() -> None:
    failure = error_from_failure(
        {
            "ok": False,
            "errorCode": "worker_unavailable",
            "message": "worker_unavailable: none",
            "payload": {"x": 1},
        }
    )
    assert isinstance(failure, WorkbenchEnvironmentError)
    assert (failure.code, failure.message, failure.status, failure.payload) == (
        "worker_unavailable",
        "worker_unavailable: none",
        None,
        {"x": 1},
    )
    proxy = error_from_response(502, b"<html>Bad Gateway</html>")
    assert isinstance(proxy, DependencyError) and proxy.code == "unavailable" and proxy.status == 502
    assert "Bad Gateway" in proxy.message
    newer = error_from_response(418, b'{"ok":false,"errorCode":"teapot","message":"teapot: no"}')
    assert type(newer) is WorkbenchError and newer.code == "teapot" and newer.category is None


def test_http_refusals_carry_code_status_and_payload(client: WorkbenchClient, url: str, run_id: str) -> None:
    with (
        WorkbenchClient(url, "mqt_not-a-real-token") as stranger,
        pytest.raises(PolicyError) as unauthenticated,
    ):
        stranger.list_runs()
    assert (unauthenticated.value.code, unauthenticated.value.status) == ("unauthenticated", 401)
    assert unauthenticated.value.message.startswith("unauthenticated: ")

    with pytest.raises(CallerError) as missing:
        client.get_run("run-00000000-0000-0000-0000-000000000000")
    assert (missing.value.code, missing.value.status) == ("not_found", 404)

    with pytest.raises(CallerError) as bad_limit:
        client.list_runs(limit=0)
    assert (bad_limit.value.code, bad_limit.value.status) == ("invalid_arguments", 400)
    assert "limit" in bad_limit.value.message

    with pytest.raises(CallerError) as not_running:
        process = client.processes.start(run_id, "true")
        client.processes.wait(run_id, process["processId"], 30_000)
        client.processes.signal(run_id, process["processId"])
    assert (not_running.value.code, not_running.value.status) == ("process_not_running", 409)
    assert not_running.value.payload["status"] == "exited"


def test_dispatch_refusals_are_raised_without_a_status(client: WorkbenchClient, run_id: str) -> None:
    with pytest.raises(CallerError) as invalid:
        client.fs_read(run_id, "/etc/passwd")
    assert invalid.value.code in ("invalid_path", "invalid_arguments") and invalid.value.status is None
    result = client.dispatch(run_id, "fs_read", {"path": "x", "bogus": True})
    assert result["ok"] is False and result["errorCode"] == "invalid_arguments"
    assert result["payload"]["problems"][0]["field"] == "args.bogus"


def test_an_unreachable_node_is_a_dependency_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with WorkbenchClient(f"http://127.0.0.1:{port}/v1", "t") as nobody:
        assert nobody.base_url == f"http://127.0.0.1:{port}"
        with pytest.raises(DependencyError) as down:
            nobody.me()
    assert (down.value.code, down.value.status) == ("unavailable", None)
    assert f"127.0.0.1:{port}" in down.value.message


def test_ids_too_long_to_name_anything_are_refused_before_sending(client: WorkbenchClient) -> None:
    with pytest.raises(CallerError) as long_id:
        client.get_run("r" * 257)
    assert (long_id.value.code, long_id.value.status) == ("invalid_arguments", None)
    assert long_id.value.payload == {"field": "runId", "length": 257, "limit": 256}
    with pytest.raises(CallerError) as empty:
        client.get_command("")
    assert empty.value.payload["field"] == "commandId"
