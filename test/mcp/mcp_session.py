"""How the Python MCP test clients (the independent `mcp` package) reach the server.

A client script's arguments start with the transport:

    http URL TOKEN ...             Streamable HTTP at URL, with TOKEN as the bearer token
    stdio NODE CLI URL TOKEN ...   `NODE CLI mcp` as a child process, reaching the API at URL

and go on with its own. `run(exercise)` opens a session on that transport, awaits
`exercise(session, rest)` with the remaining arguments and prints its result as JSON.
"""

import asyncio
import json
import sys
from typing import Any, Awaitable, Callable

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

Exercise = Callable[[ClientSession, list[str]], Awaitable[Any]]


async def _serve(argv: list[str], exercise: Exercise) -> Any:
    mode = argv[0] if argv else ""
    if mode == "http":
        url, token, rest = argv[1], argv[2], argv[3:]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                return await exercise(session, rest)
    if mode == "stdio":
        node, cli, url, token, rest = argv[1], argv[2], argv[3], argv[4], argv[5:]
        params = StdioServerParameters(
            command=node, args=[cli, "mcp"], env={"MEMQL_URL": url, "MEMQL_TOKEN": token}
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await exercise(session, rest)
    raise SystemExit(f"unknown mode {mode!r}: expected http or stdio")


def run(exercise: Exercise) -> None:
    """Runs `exercise` on the transport `sys.argv` names and prints what it returns."""
    print(json.dumps(asyncio.run(_serve(sys.argv[1:], exercise))))
