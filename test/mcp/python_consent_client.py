"""An independent MCP client (the Python `mcp` package) for the consent test.

Usage: python_consent_client.py http URL TOKEN
       python_consent_client.py stdio NODE CLI URL TOKEN

Lists the tools, opens a run and asks for an exec that needs a display (which only
the user's worker host provides, and which the user has not consented to); prints one
JSON object with what it saw, for the test to check.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def exercise(session: ClientSession) -> dict:
    init = await session.initialize()
    tools = await session.list_tools()
    opened = await session.call_tool("open_run", {})
    run_id = opened.structured_content["runId"]
    asked = await session.call_tool(
        "exec",
        {"runId": run_id, "command": "xdpyinfo", "environment": {"needs": ["display"]}},
    )
    return {
        "instructions": init.instructions or "",
        "tools": [
            {"name": t.name, "description": t.description or "", "schema": t.input_schema}
            for t in tools.tools
        ],
        "runId": run_id,
        "asked": {
            "isError": bool(asked.is_error),
            "text": asked.content[0].text,
            "structured": asked.structured_content,
        },
    }


async def main() -> None:
    mode = sys.argv[1]
    if mode == "http":
        url, token = sys.argv[2], sys.argv[3]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                out = await exercise(session)
    elif mode == "stdio":
        node, cli, url, token = sys.argv[2:6]
        params = StdioServerParameters(
            command=node, args=[cli, "mcp"], env={"MEMQL_URL": url, "MEMQL_TOKEN": token}
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await exercise(session)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(out))


asyncio.run(main())
