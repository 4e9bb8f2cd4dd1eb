"""Drives an MCP server over stdio with the reference Python SDK's client (PyPI mcp), for the
tests: starts the command given as arguments, lists its tools, then answers one JSON request
per line on stdin, {"tool": NAME, "arguments": {...}}, with one JSON line on stdout:
{"ok": true, "text": ..., "is_error": ...} for a result, {"ok": false, "error": ...} for an
MCP error. The first line out is {"tools": [{"name", "description", "input_schema"}]}.
"""
import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            print(json.dumps({"tools": [{"name": t.name, "description": t.description,
                                         "input_schema": t.input_schema} for t in tools.tools]}),
                  flush=True)
            loop = asyncio.get_running_loop()
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    break
                request = json.loads(line)
                try:
                    result = await session.call_tool(request["tool"], request["arguments"])
                    text = "".join(c.text for c in result.content if c.type == "text")
                    print(json.dumps({"ok": True, "text": text, "is_error": bool(result.is_error)}), flush=True)
                except MCPError as e:
                    print(json.dumps({"ok": False, "error": str(e)}), flush=True)


asyncio.run(main())
