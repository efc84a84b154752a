"""One MCP session of an independent client (the Python `mcp` package) that runs one exec.

Usage: python_exec_session.py http URL TOKEN RUN_ID COMMAND
       python_exec_session.py stdio NODE CLI URL TOKEN RUN_ID COMMAND

Opens a new session, calls the exec tool once in run RUN_ID and prints one JSON object
with what it saw: the command's stdout and the call's callId.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def exercise(session: ClientSession, run_id: str, command: str) -> dict:
    await session.initialize()
    ran = await session.call_tool("exec", {"runId": run_id, "command": command})
    content = ran.structured_content or {}
    return {
        "isError": bool(ran.is_error),
        "stdout": (content.get("payload") or {}).get("stdout"),
        "callId": content.get("callId"),
        "text": ran.content[0].text if ran.content else "",
    }


async def main() -> None:
    mode = sys.argv[1]
    if mode == "http":
        url, token, run_id, command = sys.argv[2:6]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                out = await exercise(session, run_id, command)
    elif mode == "stdio":
        node, cli, url, token, run_id, command = sys.argv[2:8]
        params = StdioServerParameters(
            command=node, args=[cli, "mcp"], env={"MEMQL_URL": url, "MEMQL_TOKEN": token}
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await exercise(session, run_id, command)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(out))


asyncio.run(main())
