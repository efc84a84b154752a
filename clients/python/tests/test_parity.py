"""The sync and async clients have the same methods, with the same parameters."""

from __future__ import annotations

import inspect

import pytest

from memql_workbench import (
    TOOL_ACTION_NAMES,
    AsyncProcessClient,
    AsyncVersionClient,
    AsyncWorkbenchClient,
    ProcessClient,
    VersionClient,
    WorkbenchClient,
)
from memql_workbench.args import ACTION_ARGS

# Closing is the one difference: httpx's names, close() and aclose().
RENAMED = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}


def public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") or name in RENAMED or name in RENAMED.values()
    }


@pytest.mark.parametrize(
    ("sync", "async_"),
    [
        (WorkbenchClient, AsyncWorkbenchClient),
        (ProcessClient, AsyncProcessClient),
        (VersionClient, AsyncVersionClient),
    ],
)
def test_the_async_client_has_the_sync_clients_methods(sync: type, async_: type) -> None:
    sync_methods = public(sync)
    async_methods = public(async_)
    assert {RENAMED.get(n, n) for n in sync_methods} == set(async_methods)
    for name, signature in sync_methods.items():
        other = async_methods[RENAMED.get(name, name)]
        assert list(other.parameters) == list(signature.parameters), name
        assert [p.default for p in other.parameters.values()] == [
            p.default for p in signature.parameters.values()
        ]
        streams = name.startswith(("iter_", "dispatch_stream", "exec_stream", "follow", "workbench_host"))
        if not streams and name not in ("from_env",):
            assert inspect.iscoroutinefunction(getattr(async_, RENAMED.get(name, name))), f"{name} is awaited"


def test_every_tool_action_has_its_args_type() -> None:
    assert tuple(ACTION_ARGS) == TOOL_ACTION_NAMES
