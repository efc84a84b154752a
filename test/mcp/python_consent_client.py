"""An independent MCP client (the Python `mcp` package) for the consent test.

Usage: python_consent_client.py http URL TOKEN
       python_consent_client.py stdio NODE CLI URL TOKEN

Lists the tools, opens a run and asks for an exec that needs a display (which only
the user's worker host provides, and which the user has not consented to); prints one
JSON object with what it saw, for the test to check.
"""

from mcp import ClientSession
from mcp_session import run


async def exercise(session: ClientSession, _rest: list[str]) -> dict:
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


run(exercise)
