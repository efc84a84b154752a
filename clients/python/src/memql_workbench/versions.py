"""``client.versions``: a run's workspace history (``docs/versions.md``).

Every change of a run's files is a version: listed newest first, compared, labelled
(a checkpoint, kept past retention), restored (itself a new version) and forked (a new
run starting at a version). Every method raises the refusal's category error
(``version_not_found``, ``label_in_use``, ...).
"""

from __future__ import annotations

from . import _routes as routes
from ._transport import AsyncTransport, SyncTransport
from .views import (
    ForkAnswer,
    ManifestPage,
    VersionDiffPayload,
    VersionListPayload,
    VersionRestorePayload,
    VersionView,
)


class VersionClient:
    """A run's workspace history, for the sync client."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def list(
        self, run_id: str, *, limit: int | None = None, before: int | None = None, labelled: bool = False
    ) -> VersionListPayload:
        """A page of versions, newest first; pass its ``next`` as ``before`` for the next."""
        return self._http.call(routes.version_list(run_id, limit, before, labelled))

    def diff(
        self,
        run_id: str,
        from_version: int,
        *,
        to: int | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> VersionDiffPayload:
        """What changed from ``from_version`` to ``to`` (the current version by default)."""
        return self._http.call(routes.version_diff(run_id, from_version, to, limit, after))

    def checkpoint(self, run_id: str, label: str, *, version: int | None = None) -> VersionView:
        """Labels a version (the current one by default): kept past retention, named in restore and fork."""
        return self._http.call(routes.version_checkpoint(run_id, label, version))

    def remove_checkpoint(self, run_id: str, label: str) -> VersionView:
        """Takes a label off; answers the version it named (which then follows retention)."""
        return self._http.call(routes.version_remove_checkpoint(run_id, label))

    def restore(
        self, run_id: str, *, version: int | None = None, label: str | None = None, call_id: str | None = None
    ) -> VersionRestorePayload:
        """Makes the workspace equal to a version (by number or label), as a new version."""
        return self._http.call(routes.version_restore(run_id, version, label, call_id))

    def fork(
        self,
        run_id: str,
        *,
        version: int | None = None,
        label: str | None = None,
        conversation_id: str | None = None,
    ) -> ForkAnswer:
        """A new run of the caller's whose workspace starts at a version (the current by default)."""
        return self._http.call(routes.version_fork(run_id, version, label, conversation_id))

    def manifest(
        self, run_id: str, *, version: int | None = None, after: str | None = None, limit: int | None = None
    ) -> ManifestPage:
        """The files a kept version holds (the current by default), by path; pass ``next`` as ``after``."""
        return self._http.call(routes.version_manifest(run_id, version, after, limit))


class AsyncVersionClient:
    """A run's workspace history, for the async client: :class:`VersionClient`, awaited."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def list(
        self, run_id: str, *, limit: int | None = None, before: int | None = None, labelled: bool = False
    ) -> VersionListPayload:
        """A page of versions, newest first; pass its ``next`` as ``before`` for the next."""
        return await self._http.call(routes.version_list(run_id, limit, before, labelled))

    async def diff(
        self,
        run_id: str,
        from_version: int,
        *,
        to: int | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> VersionDiffPayload:
        """What changed from ``from_version`` to ``to`` (the current version by default)."""
        return await self._http.call(routes.version_diff(run_id, from_version, to, limit, after))

    async def checkpoint(self, run_id: str, label: str, *, version: int | None = None) -> VersionView:
        """Labels a version (the current one by default)."""
        return await self._http.call(routes.version_checkpoint(run_id, label, version))

    async def remove_checkpoint(self, run_id: str, label: str) -> VersionView:
        """Takes a label off; answers the version it named."""
        return await self._http.call(routes.version_remove_checkpoint(run_id, label))

    async def restore(
        self, run_id: str, *, version: int | None = None, label: str | None = None, call_id: str | None = None
    ) -> VersionRestorePayload:
        """Makes the workspace equal to a version (by number or label), as a new version."""
        return await self._http.call(routes.version_restore(run_id, version, label, call_id))

    async def fork(
        self,
        run_id: str,
        *,
        version: int | None = None,
        label: str | None = None,
        conversation_id: str | None = None,
    ) -> ForkAnswer:
        """A new run of the caller's whose workspace starts at a version (the current by default)."""
        return await self._http.call(routes.version_fork(run_id, version, label, conversation_id))

    async def manifest(
        self, run_id: str, *, version: int | None = None, after: str | None = None, limit: int | None = None
    ) -> ManifestPage:
        """The files a kept version holds (the current by default), by path."""
        return await self._http.call(routes.version_manifest(run_id, version, after, limit))
