"""The tests run against a live node: ``MEMQL_URL`` and ``MEMQL_TOKEN`` (an agent token), and
``MEMQL_PERSON_TOKEN`` for the tests that need the person's. ``npm start`` prints all three;
``test/client/python-sdk.test.ts`` starts a node of its own and passes them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

import pytest

from memql_workbench import AsyncWorkbenchClient, WorkbenchClient, WorkbenchError

T = TypeVar("T")


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("MEMQL_URL") or not os.environ.get("MEMQL_TOKEN"):
        raise pytest.UsageError(
            "these tests need a live node: set MEMQL_URL and MEMQL_TOKEN (and MEMQL_PERSON_TOKEN) "
            "to what npm start printed"
        )


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"set {name}: this test needs it")
    return value


@pytest.fixture
def url() -> str:
    return env("MEMQL_URL")


@pytest.fixture
def token() -> str:
    return env("MEMQL_TOKEN")


@pytest.fixture
def person_token() -> str:
    return env("MEMQL_PERSON_TOKEN")


@pytest.fixture
def client(url: str, token: str) -> Iterator[WorkbenchClient]:
    with WorkbenchClient(url, token, agent_id="pytest", task_id="sdk-tests") as c:
        yield c


@pytest.fixture
async def aclient(url: str, token: str) -> AsyncIterator[AsyncWorkbenchClient]:
    async with AsyncWorkbenchClient(url, token, agent_id="pytest", task_id="sdk-tests") as c:
        yield c


def _remove(client: WorkbenchClient, run_id: str) -> None:
    # Already ended with another status, or deleted by the test: nothing to do.
    with contextlib.suppress(WorkbenchError):
        client.end_run(run_id, "succeeded")
    with contextlib.suppress(WorkbenchError):
        client.delete_run(run_id)


@pytest.fixture
def run_id(client: WorkbenchClient) -> Iterator[str]:
    """A fresh run, ended and deleted afterwards."""
    run = client.create_run(conversation_id="pytest")
    yield run["id"]
    _remove(client, run["id"])


@pytest.fixture
async def arun_id(aclient: AsyncWorkbenchClient, url: str, token: str) -> AsyncIterator[str]:
    """A fresh run for the async tests, ended and deleted afterwards."""
    run = await aclient.create_run(conversation_id="pytest-async")
    yield run["id"]
    with WorkbenchClient(url, token) as c:
        _remove(c, run["id"])


def wait_until(check: Callable[[], T | None], what: str, timeout: float = 60.0) -> T:
    """Polls ``check`` until it returns something other than None; fails after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s")
        time.sleep(0.05)
