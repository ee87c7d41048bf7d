"""The reference MCP servers from npm, pinned, each installed once into a
cache under the build tree and shared by the MCP suites:
@modelcontextprotocol/server-everything (mcp_servers, mcp_turns, mcp_http,
mcp_elicitation, mcp_codex_compare and bench/mcp_call_bench.py) and
@modelcontextprotocol/server-filesystem (mcp_filesystem)."""
import os
import shutil
import subprocess

PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"


def install(prefix, package):
    """`package`'s entry point (dist/index.js) under `prefix`, installed on
    first use; None (and a SKIPPED line saying why) if it cannot be had."""
    name = package.rsplit("@", 1)[0]
    index = os.path.join(prefix, "node_modules", *name.split("/"), "dist", "index.js")
    if os.path.exists(index):
        return index
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("SKIPPED: npm or node is missing")
        return None
    os.makedirs(prefix, exist_ok=True)
    try:
        r = subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", package],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        print("SKIPPED: npm install timed out")
        return None
    if r.returncode != 0 or not os.path.exists(index):
        print("SKIPPED: npm install failed:", r.stderr[-300:])
        return None
    return index


def install_everything(cache):
    """server-everything's entry point, in `cache` itself."""
    return install(cache, PACKAGE)


def install_filesystem(cache):
    """server-filesystem's entry point, in a prefix of its own under `cache`
    (suites that use the other server may run meanwhile: npm never rewrites
    their node_modules under them)."""
    return install(os.path.join(cache, "filesystem"), FILESYSTEM_PACKAGE)
