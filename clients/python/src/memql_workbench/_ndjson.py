"""Reading the streaming answers: ``application/x-ndjson``, one JSON object per line.

Network chunks may end anywhere, inside a line or a multi-byte character, so lines are
split on the newline byte and decoded only once complete. Lines are never split on
other line breaks: a JSON string may carry U+2028 unescaped, which ``str.splitlines``
(and so a text line reader) would cut.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ._wire import is_dispatch_result
from .errors import WorkbenchError, error_for, not_shaped
from .events import FollowedOutput, OutputChunk, ProcessEnded, StreamResult


class NdjsonSplitter:
    """Splits a byte stream into lines; feed it chunks, ``end()`` gives an unterminated last line."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def push(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completed, without newlines; blank lines dropped."""
        lines: list[bytes] = []
        start = 0
        newline = chunk.find(b"\n")
        while newline >= 0:
            self._pending += chunk[start:newline]
            line = bytes(self._pending).strip()
            self._pending.clear()
            if line:
                lines.append(line)
            start = newline + 1
            newline = chunk.find(b"\n", start)
        self._pending += chunk[start:]
        return lines

    def end(self) -> list[bytes]:
        """The last line when it had no newline."""
        line = bytes(self._pending).strip()
        self._pending = bytearray()
        return [line] if line else []


def _object(line: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise not_shaped(what, f"JSON object lines (got {line[:120]!r})")
    return value


def dispatch_event(line: bytes) -> OutputChunk | StreamResult:
    """One line of ``POST /v1/dispatch/stream``."""
    value = _object(line, "the dispatch stream")
    if value.get("type") == "output" and value.get("stream") in ("stdout", "stderr"):
        return OutputChunk(value["stream"], base64.b64decode(str(value.get("data", ""))))
    if value.get("type") == "result" and is_dispatch_result(value.get("result")):
        return StreamResult(value["result"])
    raise not_shaped("the dispatch stream", f"output or result lines (got {line[:120]!r})")


def follow_event(line: bytes) -> FollowedOutput | ProcessEnded:
    """One line of a process's followed output; an ``error`` line is raised."""
    value = _object(line, "the process follow")
    kind = value.get("type")
    if kind == "output" and value.get("stream") in ("stdout", "stderr"):
        data = base64.b64decode(str(value.get("data", "")))
        return FollowedOutput(value["stream"], int(value.get("offset", 0)), data)
    if kind == "end" and isinstance(value.get("process"), dict):
        return ProcessEnded(value["process"])
    if kind == "error":
        raise error_for(str(value.get("errorCode", "internal")), str(value.get("message", "")))
    raise not_shaped("the process follow", f"output or end lines (got {line[:120]!r})")


def cut_short(what: str) -> WorkbenchError:
    """The error of a stream that ended before its last line."""
    return error_for(
        "unavailable",
        f"unavailable: {what} ended before its end; whatever it was doing may have run, "
        "check the run before retrying",
    )
