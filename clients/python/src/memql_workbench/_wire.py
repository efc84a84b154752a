"""What the sync and async clients share: a request described as data, and reading answers.

Everything here is pure: a :class:`Call` says which route, with what query and body,
and how to read its JSON answer; the clients only send it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from .errors import CallerError, error_from_failure, not_shaped
from .types import DispatchResult, EnvironmentHint

T = TypeVar("T")

MAX_ID_CHARS = 256
"""Longest id the contract accepts (``MAX_ID_CHARS``): a longer one can name nothing."""

MAX_PATH_CHARS = 4096
"""Longest workspace path the contract accepts (``MAX_PATH_CHARS``)."""


def _identity(body: Any) -> Any:
    return body


@dataclass(frozen=True)
class Call(Generic[T]):
    """One JSON request: the route, its query and body, and how its answer is read."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None
    parse: Callable[[Any], T] = _identity
    ok_statuses: frozenset[int] = frozenset()
    """Statuses besides 2xx whose body is an answer (``/readyz``'s 503)."""


def checked(name: str, value: str, limit: int = MAX_ID_CHARS) -> str:
    """``value`` when it has 1 to ``limit`` characters; else ``invalid_arguments`` naming it."""
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        length = len(value) if isinstance(value, str) else 0
        raise CallerError(
            "invalid_arguments",
            f"invalid_arguments: {name}: {'empty' if length == 0 else f'{length} characters'}; "
            f"expected 1 to {limit} characters",
            None,
            {"field": name, "length": length, "limit": limit},
        )
    return value


def seg(name: str, value: str) -> str:
    """An id as one URL path segment: checked, then encoded."""
    return quote(checked(name, value), safe="")


def query(**values: Any) -> dict[str, str]:
    """A query from keyword values: None left out, booleans as ``true``/``false``."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def compact(**values: Any) -> dict[str, Any]:
    """A JSON object from keyword values, None left out (the server applies defaults)."""
    return {key: value for key, value in values.items() if value is not None}


def key(name: str) -> Callable[[Any], Any]:
    """Reads ``body[name]``, or raises ``internal`` naming the missing field."""

    def read(body: Any) -> Any:
        if isinstance(body, dict) and name in body:
            return body[name]
        raise not_shaped(f'the answer\'s "{name}"', f'a "{name}" field')

    return read


def envelope(
    run_id: str,
    action: str,
    args: Any,
    agent_id: str,
    task_id: str,
    call_id: str | None,
    environment: EnvironmentHint | None,
) -> dict[str, Any]:
    """The ``workbenchHost`` envelope of one call."""
    out: dict[str, Any] = {
        "action": action,
        "args": args,
        "runId": run_id,
        "agentId": agent_id,
        "taskId": task_id,
    }
    if call_id is not None:
        out["callId"] = call_id
    if environment is not None:
        out["environment"] = environment
    return out


def is_dispatch_result(value: Any) -> bool:
    """Whether ``value`` has the shape of a dispatch result."""
    if not isinstance(value, dict):
        return False
    if value.get("ok") is True:
        return "payload" in value
    return (
        value.get("ok") is False
        and isinstance(value.get("errorCode"), str)
        and isinstance(value.get("message"), str)
    )


def dispatch_result(body: Any) -> DispatchResult:
    """``body`` as a dispatch result, or ``internal`` when it is not one."""
    if not is_dispatch_result(body):
        raise not_shaped("/v1/dispatch", "a dispatch result")
    result: DispatchResult = body
    return result


def payload_of(result: DispatchResult) -> Any:
    """The payload of a successful result; a failed one is raised as its category's error."""
    if result["ok"] is True:
        return result["payload"]
    raise error_from_failure(result)


def decoded(text: str, encoding: str | None) -> bytes:
    """The bytes a string of an answer carries: base64 when ``encoding`` says so, else UTF-8."""
    return base64.b64decode(text) if encoding == "base64" else text.encode("utf-8")


def content_args(content: str | bytes) -> dict[str, str]:
    """``fs_write``'s ``content`` and ``encoding`` for text or bytes."""
    if isinstance(content, bytes):
        return {"content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}
    return {"content": content}


def json_body(body: bytes) -> Any:
    """A body's JSON, or None when it is not JSON."""
    try:
        return json.loads(body)
    except ValueError:
        return None
