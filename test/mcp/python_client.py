"""An independent MCP client (the Python `mcp` package) for the MCP server test.

Usage: python_client.py http URL TOKEN
       python_client.py stdio NODE CLI URL TOKEN

Lists the tools, opens a run, runs an exec in it and ends the run; prints one JSON
object with what it saw, for the test to check.
"""

from mcp import ClientSession
from mcp_session import run


async def exercise(session: ClientSession, _rest: list[str]) -> dict:
    await session.initialize()
    tools = await session.list_tools()
    opened = await session.call_tool("open_run", {})
    run_id = opened.structured_content["runId"]
    ran = await session.call_tool(
        "exec", {"runId": run_id, "command": "printf '%s\\n' 'hello from python' | tr a-z A-Z"}
    )
    refused = await session.call_tool("exec", {"runId": run_id, "command": "sudo id"})
    ended = await session.call_tool("end_run", {"runId": run_id, "status": "succeeded"})
    return {
        "tools": [t.name for t in tools.tools],
        "runId": run_id,
        "exec": {
            "isError": bool(ran.is_error),
            "stdout": ran.structured_content["payload"]["stdout"],
            "exitCode": ran.structured_content["payload"]["exitCode"],
        },
        "refused": {
            "isError": bool(refused.is_error),
            "text": refused.content[0].text,
        },
        "ended": not ended.is_error,
    }


run(exercise)
