"""What the streams yield, and what downloads and command reads return.

A dispatch stream yields :class:`OutputChunk` items as a command writes, then one
:class:`StreamResult`; a followed process yields :class:`FollowedOutput` items, then one
:class:`ProcessEnded`. Match on the class::

    for event in stream:
        match event:
            case OutputChunk(stream="stdout", data=data):
                sys.stdout.buffer.write(data)
            case StreamResult(result=result):
                print(result["ok"])
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from .types import CommandRecord, DispatchResult, OutputStream
from .views import ProcessView


@dataclass(frozen=True)
class OutputChunk:
    """A piece of a running command's output, as it was written."""

    stream: OutputStream
    data: bytes


@dataclass(frozen=True)
class StreamResult:
    """The dispatch result that ends a dispatch stream."""

    result: DispatchResult


StreamEvent = OutputChunk | StreamResult
"""One item of a dispatch stream."""


@dataclass(frozen=True)
class FollowedOutput:
    """A piece of a followed process's output: its stream, where it starts, and the bytes."""

    stream: OutputStream
    offset: int
    data: bytes


@dataclass(frozen=True)
class ProcessEnded:
    """The end of a followed process: the process as it ended."""

    process: ProcessView


FollowEvent = FollowedOutput | ProcessEnded
"""One item of a followed process's output."""


@dataclass(frozen=True)
class DownloadResult:
    """What a finished download wrote: the byte count and the hex SHA-256 of the bytes."""

    bytes: int
    sha256: str


@dataclass(frozen=True)
class CommandOutput:
    """A command's output as bytes (the API carries output that is not text in base64)."""

    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool

    @classmethod
    def of(cls, command: CommandRecord) -> CommandOutput:
        """The output of a command record."""

        def raw(text: str, encoding: str | None) -> bytes:
            return base64.b64decode(text) if encoding == "base64" else text.encode("utf-8")

        return cls(
            raw(command["stdout"], command.get("stdoutEncoding")),
            raw(command["stderr"], command.get("stderrEncoding")),
            command["stdoutTruncated"],
            command["stderrTruncated"],
        )
