"""The reference MCP server (@modelcontextprotocol/server-everything, pinned)
from npm, installed once into a cache under the build tree and shared by the
MCP suites (mcp_servers, mcp_turns, mcp_http, mcp_elicitation) and
bench/mcp_call_bench.py."""
import os
import shutil
import subprocess

PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"


def install_everything(cache):
    """The server's entry point (dist/index.js) under `cache`, installed on
    first use; None (and a SKIPPED line saying why) if it cannot be had."""
    index = os.path.join(cache, "node_modules", "@modelcontextprotocol", "server-everything",
                         "dist", "index.js")
    if os.path.exists(index):
        return index
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("SKIPPED: npm or node is missing")
        return None
    os.makedirs(cache, exist_ok=True)
    try:
        r = subprocess.run(["npm", "install", "--prefix", cache, "--no-audit", "--no-fund", PACKAGE],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        print("SKIPPED: npm install timed out")
        return None
    if r.returncode != 0 or not os.path.exists(index):
        print("SKIPPED: npm install failed:", r.stderr[-300:])
        return None
    return index
