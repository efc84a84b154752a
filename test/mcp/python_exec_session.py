"""One MCP session of an independent client (the Python `mcp` package) that runs one exec.

Usage: python_exec_session.py http URL TOKEN RUN_ID COMMAND
       python_exec_session.py stdio NODE CLI URL TOKEN RUN_ID COMMAND

Opens a new session, calls the exec tool once in run RUN_ID and prints one JSON object
with what it saw: the command's stdout and the call's callId.
"""

from mcp import ClientSession
from mcp_session import run


async def exercise(session: ClientSession, rest: list[str]) -> dict:
    run_id, command = rest
    await session.initialize()
    ran = await session.call_tool("exec", {"runId": run_id, "command": command})
    content = ran.structured_content or {}
    return {
        "isError": bool(ran.is_error),
        "stdout": (content.get("payload") or {}).get("stdout"),
        "callId": content.get("callId"),
        "text": ran.content[0].text if ran.content else "",
    }


run(exercise)
