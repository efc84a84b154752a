"""The one tool of a tool loop: the ``workbenchHost`` definition a model is given, and the
function that runs a model's call of it.

The definition is the contract's own (``workbenchToolDefinition()``), shipped with the
package as ``tool-definition.json`` and held in step with the contract by
``test/client/python-sdk.test.ts``. OpenAI-style APIs take
``{"type": "function", "function": tool}``; Anthropic's takes
``{"name": ..., "description": ..., "input_schema": tool["parameters"]}``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, TypedDict

from ._wire import envelope
from .errors import WorkbenchError
from .types import DispatchFailure, DispatchResult, EnvironmentHint

WORKBENCH_TOOL_NAME = "workbenchHost"
"""The tool's name, as models call it."""

MODEL_FIXABLE_CODES = frozenset({"invalid_arguments", "payload_too_large"})
"""Refusals a model can act on (fix the arguments, send less): returned as failed results
even when the HTTP layer refused them. Anything else (a bad token, an unreachable node)
is raised, since no model turn can fix it."""


class ToolDefinition(TypedDict):
    """A function-calling tool definition: JSON Schema ``parameters`` of type object."""

    name: str
    description: str
    parameters: dict[str, Any]


def workbench_tool_definition() -> ToolDefinition:
    """The ``workbenchHost`` tool definition; a fresh object on every call."""
    text = resources.files(__package__).joinpath("tool-definition.json").read_text("utf-8")
    definition: ToolDefinition = json.loads(text)
    return definition


def failure(code: str, message: str, payload: Any = None) -> DispatchFailure:
    """A failed dispatch result, as the server shapes one."""
    result: DispatchFailure = {"ok": False, "errorCode": code, "message": message}
    if payload is not None:
        result["payload"] = payload
    return result


def tool_call(arguments: str | dict[str, Any]) -> tuple[str, Any, EnvironmentHint | None] | DispatchFailure:
    """The ``(action, args, environment)`` of a model's tool call (its JSON ``arguments``),
    or the ``invalid_arguments`` result to hand back when they are not that shape."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError as err:
        return failure("invalid_arguments", f"invalid_arguments: the tool arguments are not JSON ({err})")
    if not isinstance(value, dict) or not isinstance(value.get("action"), str):
        return failure("invalid_arguments", 'invalid_arguments: expected {"action": ..., "args": {...}}')
    return value["action"], value.get("args", {}), value.get("environment")


Dispatch = Callable[[dict[str, Any]], DispatchResult]
AsyncDispatch = Callable[[dict[str, Any]], Awaitable[DispatchResult]]


class WorkbenchHost:
    """``workbenchHost`` bound to a run: call it with an action and its args, or hand it a
    model's tool call with :meth:`run_tool_call`; it returns the dispatch result to give
    back to the model (a refused call is a result, not an exception)."""

    def __init__(self, dispatch: Dispatch, run_id: str, agent_id: str, task_id: str) -> None:
        self._dispatch = dispatch
        self.run_id = run_id
        self.agent_id = agent_id
        self.task_id = task_id

    def __call__(
        self,
        action: str,
        args: Any,
        *,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> DispatchResult:
        request = envelope(self.run_id, action, args, self.agent_id, self.task_id, call_id, environment)
        try:
            return self._dispatch(request)
        except WorkbenchError as err:
            if err.code in MODEL_FIXABLE_CODES:
                return failure(err.code, err.message, err.payload)
            raise

    def run_tool_call(self, arguments: str | dict[str, Any], *, call_id: str | None = None) -> DispatchResult:
        """Runs a model's tool call: its JSON ``arguments`` (``{action, args, environment?}``)
        and its id as the ``call_id`` (a repeat of the call then answers the recorded outcome)."""
        parsed = tool_call(arguments)
        if not isinstance(parsed, tuple):
            return parsed
        action, args, environment = parsed
        return self(action, args, call_id=call_id, environment=environment)


class AsyncWorkbenchHost:
    """:class:`WorkbenchHost` for the async client: the same, awaited."""

    def __init__(self, dispatch: AsyncDispatch, run_id: str, agent_id: str, task_id: str) -> None:
        self._dispatch = dispatch
        self.run_id = run_id
        self.agent_id = agent_id
        self.task_id = task_id

    async def __call__(
        self,
        action: str,
        args: Any,
        *,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> DispatchResult:
        request = envelope(self.run_id, action, args, self.agent_id, self.task_id, call_id, environment)
        try:
            return await self._dispatch(request)
        except WorkbenchError as err:
            if err.code in MODEL_FIXABLE_CODES:
                return failure(err.code, err.message, err.payload)
            raise

    async def run_tool_call(
        self, arguments: str | dict[str, Any], *, call_id: str | None = None
    ) -> DispatchResult:
        """Runs a model's tool call, as :meth:`WorkbenchHost.run_tool_call` does."""
        parsed = tool_call(arguments)
        if not isinstance(parsed, tuple):
            return parsed
        action, args, environment = parsed
        return await self(action, args, call_id=call_id, environment=environment)
