"""The HTTP exchange under both clients: the bearer token, a non-2xx answer raised as its
category's error, a request that got no answer raised as ``unavailable``, JSON read.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

import httpx

from ._wire import Call
from .errors import DependencyError, error_from_response, not_shaped, unreachable

T = TypeVar("T")

DEFAULT_TIMEOUT = httpx.Timeout(None, connect=10.0)
"""No read limit (a dispatch waits for its command, up to an hour), 10 s to connect."""

USER_AGENT = "memql-workbench-python/0.1.0"


def base_url_of(url: str) -> str:
    """The API's base address without a trailing ``/`` or ``/v1`` (``npm start`` prints ``.../v1``)."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _headers(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "user-agent": USER_AGENT}


def _parse(call: Call[T], response: httpx.Response) -> T:
    if not response.is_success and response.status_code not in call.ok_statuses:
        raise error_from_response(response.status_code, response.content)
    try:
        body: Any = response.json()
    except ValueError:
        raise not_shaped(call.path, "JSON") from None
    return call.parse(body)


class SyncTransport:
    """Sends the sync client's requests over one ``httpx.Client``."""

    def __init__(
        self, base_url: str, token: str, timeout: httpx.Timeout | float | None, http: httpx.Client | None
    ) -> None:
        self.base_url = base_url_of(base_url)
        self._owned = http is None
        self._http = http if http is not None else httpx.Client(timeout=timeout)
        self._headers = _headers(token)

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def call(self, call: Call[T]) -> T:
        """Sends one JSON request and reads its answer."""
        try:
            response = self._http.request(
                call.method,
                self.base_url + call.path,
                params=call.query,
                json=call.body,
                headers=self._headers,
            )
        except httpx.TransportError as err:
            raise unreachable(self.base_url, err) from err
        return _parse(call, response)

    @contextlib.contextmanager
    def stream(
        self,
        method: str,
        path: str,
        params: dict[str, str],
        *,
        json: Any = None,
        content: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Iterator[httpx.Response]:
        """One request whose answer is read as it comes; a non-2xx answer is raised."""
        request = self._http.build_request(
            method,
            self.base_url + path,
            params=params,
            json=json,
            content=content,
            headers={**self._headers, **(headers or {})},
        )
        try:
            response = self._http.send(request, stream=True)
        except httpx.TransportError as err:
            raise unreachable(self.base_url, err) from err
        try:
            if not response.is_success:
                raise error_from_response(response.status_code, _read_refusal(response))
            yield response
        finally:
            response.close()


def _read_refusal(response: httpx.Response) -> bytes:
    try:
        return response.read()
    except httpx.HTTPError:
        return b""


class AsyncTransport:
    """Sends the async client's requests over one ``httpx.AsyncClient``."""

    def __init__(
        self,
        base_url: str,
        token: str,
        timeout: httpx.Timeout | float | None,
        http: httpx.AsyncClient | None,
    ) -> None:
        self.base_url = base_url_of(base_url)
        self._owned = http is None
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout)
        self._headers = _headers(token)

    async def close(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def call(self, call: Call[T]) -> T:
        """Sends one JSON request and reads its answer."""
        try:
            response = await self._http.request(
                call.method,
                self.base_url + call.path,
                params=call.query,
                json=call.body,
                headers=self._headers,
            )
        except httpx.TransportError as err:
            raise unreachable(self.base_url, err) from err
        return _parse(call, response)

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        params: dict[str, str],
        *,
        json: Any = None,
        content: Any = None,
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """One request whose answer is read as it comes; a non-2xx answer is raised."""
        request = self._http.build_request(
            method,
            self.base_url + path,
            params=params,
            json=json,
            content=content,
            headers={**self._headers, **(headers or {})},
        )
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TransportError as err:
            raise unreachable(self.base_url, err) from err
        try:
            if not response.is_success:
                try:
                    body = await response.aread()
                except httpx.HTTPError:
                    body = b""
                raise error_from_response(response.status_code, body)
            yield response
        finally:
            await response.aclose()


def cut(what: str, err: BaseException) -> DependencyError:
    """The error of an answer whose body broke off (the connection closed, a read failed)."""
    return DependencyError(
        "unavailable", f"unavailable: {what} broke off ({type(err).__name__}: {err}); read it again"
    )
