"""The typed ``workbenchHost`` actions as methods of both clients: ``fs_write``, ``fs_read``,
``fs_list``, ``fs_delete``, ``exec`` (and ``exec_stream``), ``fetch`` and ``promote_artifact``.

Each sends the action through ``POST /v1/dispatch`` and returns its payload; a refused
call is raised as its category's error (status None: the refusal came inside the
result). The background-process and history actions are ``client.processes`` and
``client.versions``; :meth:`WorkbenchClient.dispatch` takes any action as data.
"""

from __future__ import annotations

from typing import Any, cast

from ._async_io import AsyncDispatchStream
from ._sync_io import DispatchStream
from ._wire import compact, content_args
from .args import ExpectedOutput
from .types import (
    EnvironmentHint,
    ExecPayload,
    FetchPayload,
    FsDeletePayload,
    FsListPayload,
    FsReadPayload,
    FsWritePayload,
    PromotedArtifact,
)


class SyncActions:
    """The typed actions of :class:`~memql_workbench.WorkbenchClient`."""

    def _act(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> Any:
        raise NotImplementedError

    def _stream(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None,
        cancel_on_disconnect: bool,
    ) -> DispatchStream:
        raise NotImplementedError

    def fs_write(
        self,
        run_id: str,
        path: str,
        content: str | bytes,
        *,
        append: bool = False,
        mode: str | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsWritePayload:
        """Creates, replaces or appends to a file: text as UTF-8, bytes as they are (up to 32 MiB;
        larger files with :meth:`upload_file`)."""
        args = {"path": path, **content_args(content), **compact(append=append or None, mode=mode)}
        return cast(FsWritePayload, self._act(run_id, "fs_write", args, call_id, environment))

    def fs_read(
        self,
        run_id: str,
        path: str,
        *,
        encoding: str | None = None,
        offset: int | None = None,
        length: int | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsReadPayload:
        """Reads a file or a byte range of it; bytes that are not UTF-8 come as base64 (``binary``)."""
        args = compact(path=path, encoding=encoding, offset=offset, length=length)
        return cast(FsReadPayload, self._act(run_id, "fs_read", args, call_id, environment))

    def fs_list(
        self,
        run_id: str,
        path: str = ".",
        *,
        recursive: bool = False,
        limit: int | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsListPayload:
        """Lists a directory (the workspace root by default)."""
        args = compact(path=path, recursive=recursive or None, limit=limit)
        return cast(FsListPayload, self._act(run_id, "fs_list", args, call_id, environment))

    def fs_delete(
        self,
        run_id: str,
        path: str,
        *,
        recursive: bool = False,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsDeletePayload:
        """Deletes a file, or a directory tree with ``recursive``."""
        args = compact(path=path, recursive=recursive or None)
        return cast(FsDeletePayload, self._act(run_id, "fs_delete", args, call_id, environment))

    def exec(
        self,
        run_id: str,
        command: str,
        *,
        timeout_ms: int | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: str | None = None,
        outputs: list[ExpectedOutput] | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> ExecPayload:
        """Runs an allowlisted shell command in the sandbox and waits for it. A non-zero exit
        is an answer (``exitCode``), not an error."""
        args = compact(command=command, timeoutMs=timeout_ms, env=env, stdin=stdin, cwd=cwd, outputs=outputs)
        return cast(ExecPayload, self._act(run_id, "exec", args, call_id, environment, cancel_on_disconnect))

    def exec_stream(
        self,
        run_id: str,
        command: str,
        *,
        timeout_ms: int | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: str | None = None,
        outputs: list[ExpectedOutput] | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> DispatchStream:
        """:meth:`exec` with its output as it comes: iterate for output chunks, then the result."""
        args = compact(command=command, timeoutMs=timeout_ms, env=env, stdin=stdin, cwd=cwd, outputs=outputs)
        return self._stream(run_id, "exec", args, call_id, environment, cancel_on_disconnect)

    def fetch(
        self,
        run_id: str,
        url: str,
        path: str,
        *,
        max_bytes: int | None = None,
        timeout_ms: int | None = None,
        call_id: str | None = None,
    ) -> FetchPayload:
        """Downloads an http(s) URL into a workspace file (public addresses only)."""
        args = compact(url=url, path=path, maxBytes=max_bytes, timeoutMs=timeout_ms)
        return cast(FetchPayload, self._act(run_id, "fetch", args, call_id))

    def promote_artifact(
        self,
        run_id: str,
        path: str,
        *,
        name: str | None = None,
        content_type: str | None = None,
        call_id: str | None = None,
    ) -> PromotedArtifact:
        """Hands a workspace file to the user as an artifact."""
        args = compact(path=path, name=name, contentType=content_type)
        return cast(PromotedArtifact, self._act(run_id, "promote_artifact", args, call_id))


class AsyncActions:
    """The typed actions of :class:`~memql_workbench.AsyncWorkbenchClient`: the same, awaited."""

    async def _act(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> Any:
        raise NotImplementedError

    def _stream(
        self,
        run_id: str,
        action: str,
        args: dict[str, Any],
        call_id: str | None,
        environment: EnvironmentHint | None,
        cancel_on_disconnect: bool,
    ) -> AsyncDispatchStream:
        raise NotImplementedError

    async def fs_write(
        self,
        run_id: str,
        path: str,
        content: str | bytes,
        *,
        append: bool = False,
        mode: str | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsWritePayload:
        """Creates, replaces or appends to a file: text as UTF-8, bytes as they are (up to 32 MiB;
        larger files with :meth:`upload_file`)."""
        args = {"path": path, **content_args(content), **compact(append=append or None, mode=mode)}
        return cast(FsWritePayload, await self._act(run_id, "fs_write", args, call_id, environment))

    async def fs_read(
        self,
        run_id: str,
        path: str,
        *,
        encoding: str | None = None,
        offset: int | None = None,
        length: int | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsReadPayload:
        """Reads a file or a byte range of it; bytes that are not UTF-8 come as base64 (``binary``)."""
        args = compact(path=path, encoding=encoding, offset=offset, length=length)
        return cast(FsReadPayload, await self._act(run_id, "fs_read", args, call_id, environment))

    async def fs_list(
        self,
        run_id: str,
        path: str = ".",
        *,
        recursive: bool = False,
        limit: int | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsListPayload:
        """Lists a directory (the workspace root by default)."""
        args = compact(path=path, recursive=recursive or None, limit=limit)
        return cast(FsListPayload, await self._act(run_id, "fs_list", args, call_id, environment))

    async def fs_delete(
        self,
        run_id: str,
        path: str,
        *,
        recursive: bool = False,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
    ) -> FsDeletePayload:
        """Deletes a file, or a directory tree with ``recursive``."""
        args = compact(path=path, recursive=recursive or None)
        return cast(FsDeletePayload, await self._act(run_id, "fs_delete", args, call_id, environment))

    async def exec(
        self,
        run_id: str,
        command: str,
        *,
        timeout_ms: int | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: str | None = None,
        outputs: list[ExpectedOutput] | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> ExecPayload:
        """Runs an allowlisted shell command in the sandbox and waits for it. A non-zero exit
        is an answer (``exitCode``), not an error."""
        args = compact(command=command, timeoutMs=timeout_ms, env=env, stdin=stdin, cwd=cwd, outputs=outputs)
        return cast(
            ExecPayload, await self._act(run_id, "exec", args, call_id, environment, cancel_on_disconnect)
        )

    def exec_stream(
        self,
        run_id: str,
        command: str,
        *,
        timeout_ms: int | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: str | None = None,
        outputs: list[ExpectedOutput] | None = None,
        call_id: str | None = None,
        environment: EnvironmentHint | None = None,
        cancel_on_disconnect: bool = False,
    ) -> AsyncDispatchStream:
        """:meth:`exec` with its output as it comes: iterate for output chunks, then the result."""
        args = compact(command=command, timeoutMs=timeout_ms, env=env, stdin=stdin, cwd=cwd, outputs=outputs)
        return self._stream(run_id, "exec", args, call_id, environment, cancel_on_disconnect)

    async def fetch(
        self,
        run_id: str,
        url: str,
        path: str,
        *,
        max_bytes: int | None = None,
        timeout_ms: int | None = None,
        call_id: str | None = None,
    ) -> FetchPayload:
        """Downloads an http(s) URL into a workspace file (public addresses only)."""
        args = compact(url=url, path=path, maxBytes=max_bytes, timeoutMs=timeout_ms)
        return cast(FetchPayload, await self._act(run_id, "fetch", args, call_id))

    async def promote_artifact(
        self,
        run_id: str,
        path: str,
        *,
        name: str | None = None,
        content_type: str | None = None,
        call_id: str | None = None,
    ) -> PromotedArtifact:
        """Hands a workspace file to the user as an artifact."""
        args = compact(path=path, name=name, contentType=content_type)
        return cast(PromotedArtifact, await self._act(run_id, "promote_artifact", args, call_id))
