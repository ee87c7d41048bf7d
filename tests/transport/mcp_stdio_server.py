"""What the suites' stdio MCP servers share: a line of JSON-RPC out, and the
answer to `initialize` (a tools-only server, the client's protocol version).
Imported by the servers beside it (a script's own folder is on its path)."""
import json
import sys


def send(obj):
    """One JSON-RPC message, a line on stdout, flushed."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def send_initialized(request_id, params, name, version="1"):
    """The answer to `initialize`: tools only, the version the client asked for."""
    send({"jsonrpc": "2.0", "id": request_id, "result": {
        "protocolVersion": params.get("protocolVersion", "2025-06-18"),
        "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": version}}})
