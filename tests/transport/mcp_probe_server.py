#!/usr/bin/env python3
"""A small stdio MCP server for the MCP suites (mcp_sandbox, mcp_startup).
Its one tool `probe` tries what its arguments say and answers with what
happened: {"write": PATH} writes a line there ("wrote", or "refused: why"),
{"read": PATH} reads it ("read: TEXT", or "refused: why").

  --slow-start S   answers initialize S seconds late
  --exit-after S   exits S seconds after its handshake (a crash, for parley)
"""
import json
import sys
import threading
import time
import os
from mcp_stdio_server import send, send_initialized


def probe(a):
    try:
        if "write" in a:
            with open(a["write"], "w") as f:
                f.write("written by an MCP server\n")
            return "wrote"
        with open(a["read"]) as f:
            return "read: " + f.read().strip()
    except OSError as e:
        return "refused: " + (e.strerror or str(e))


def main():
    args = sys.argv[1:]
    slow_start = float(args[args.index("--slow-start") + 1]) if "--slow-start" in args else 0
    exit_after = float(args[args.index("--exit-after") + 1]) if "--exit-after" in args else 0
    for line in sys.stdin:
        m = json.loads(line)
        if "id" not in m or "method" not in m:
            continue
        i, method, params = m["id"], m["method"], m.get("params") or {}
        if method == "initialize":
            time.sleep(slow_start)
            send_initialized(i, params, "probe")
            if exit_after:
                threading.Timer(exit_after, lambda: os._exit(3)).start()
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{
                "name": "probe", "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call":
            said = probe(params.get("arguments") or {})
            send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": said}]}})
        else:
            send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
