#!/usr/bin/env python3
"""MCP servers through the real `parley app-server` over stdio (issue 30).

The reference server `@modelcontextprotocol/server-everything` (installed
from npm by this test into a cache under the build tree, once) and a fake
server (mcp_fake_server.py: well-behaved or hostile), all from config.toml:

- mcpServerStatus/list shows the reference server connected with its tools
  and resources, a disabled one as disabled, a `url` one nobody serves as failed,
  pages by cursor and filters by name;
- its `echo` tool answers through mcpServer/tool/call, a resource reads
  through mcpServer/resource/read; a tool it does not offer, a tool left out
  by enabled_tools, an unknown server, missing params: errors that say so;
- hostile servers are cut off with a clear status while parley keeps
  serving: a line that is not JSON-RPC, a 20 MiB line, silence through the
  startup timeout; a tool call unanswered within tool_timeout_sec fails and
  its late answer is logged and dropped;
- the reference server killed mid-call: that call fails naming the exit,
  the server comes back by itself and answers again;
- config/mcpServer/reload with a changed config: a server removed, one
  changed (its enabled_tools), one added, without a restart;
- stdin closed: parley exits 0 and no server process is left.
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_servers_test.py PARLEY_BINARY SCHEMA_DIR NPM_CACHE_DIR
Exit 77 (skipped) when npm or the registry cannot be had.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import mcp_npm  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, SCHEMA_DIR, CACHE = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "mcp_fake_server.py")
FAILURES = []


def install_everything():
    return mcp_npm.install_everything(CACHE)


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


# The replies whose results are checked against their Codex definitions.
SCHEMA = codex_schema.Schema(SCHEMA_DIR, {
    "mcpServerStatus/list": "v2/ListMcpServerStatusResponse",
    "mcpServer/tool/call": "v2/McpServerToolCallResponse",
    "mcpServer/resource/read": "v2/McpResourceReadResponse",
    "config/mcpServer/reload": "v2/McpServerRefreshResponse",
})
def toml_list(items):
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def write_config(path, servers):
    """servers: name -> dict of keys (lists and strings as TOML)."""
    lines = []
    for name, keys in servers.items():
        lines.append("[mcp_servers.%s]" % name)
        for k, v in keys.items():
            if isinstance(v, list):
                lines.append("%s = %s" % (k, toml_list(v)))
            elif isinstance(v, bool):
                lines.append("%s = %s" % (k, "true" if v else "false"))
            elif isinstance(v, (int, float)):
                lines.append("%s = %s" % (k, v))
            else:
                lines.append("%s = %s" % (k, json.dumps(v)))
        lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def statuses(peer, **params):
    r = peer.call("mcpServerStatus/list", params)
    return {s["name"]: s for s in r["result"]["data"]}


def wait_status(peer, name, pred, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        s = statuses(peer).get(name)
        if s is not None and pred(s):
            return s
        if time.monotonic() > deadline:
            return s
        time.sleep(0.05)


def error_text(reply):
    e = reply.get("error") or {}
    return "%s %s" % (e.get("code"), e.get("message"))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children_of(pid):
    """Processes whose parent is `pid`: (pid, command line)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            if ppid != pid:
                continue
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                out.append((int(entry), f.read().replace(b"\0", b" ").decode(errors="replace")))
        except (OSError, ValueError):
            continue
    return out


def main():
    index = install_everything()
    if index is None:
        return 77
    root = tempfile.mkdtemp(prefix="parley-mcp-")
    config = os.path.join(root, "config.toml")
    everything = {"command": "node", "args": [index, "stdio"], "startup_timeout_sec": 20,
                  "tool_timeout_sec": 15}
    fake = lambda mode, **more: dict({"command": sys.executable, "args": [FAKE, mode]}, **more)  # noqa
    write_config(config, {
        "everything": everything,
        "malformed": fake("malformed"),
        "oversized": fake("oversized"),
        "silent": fake("silent", startup_timeout_sec=1),
        "slow": fake("slow", tool_timeout_sec=1),
        "flood": fake("flood", tool_timeout_sec=120),
        "off": fake("good", enabled=False),
        "remote": {"url": "http://user:pw@127.0.0.1:9/mcp?key=1"},  # nobody listens (mcp_http serves)
    })
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    started = time.monotonic()
    peer = app_server_peer.StdioPeer(
        [PARLEY, "app-server", "--store=memory", "--home", os.path.join(root, "home"),
         "--config", config], env, os.path.join(root, "parley.stderr"), client_name="mcp-test")

    thread = peer.start_thread()

    # -- status ------------------------------------------------------------------
    s = wait_status(peer, "everything", lambda s: s.get("runtimeStatus") == "connected")
    check(s and s["runtimeStatus"] == "connected", "server-everything connected (%s)"
          % (s and s.get("toolsError")))
    tools = sorted((s or {}).get("tools", {}))
    check("echo" in tools and len(tools) >= 10 and s["tools"]["echo"]["inputSchema"]["type"] == "object",
          "its tools listed with their schemas (%d: %s)" % (len(tools), ", ".join(tools)))
    check(s and len(s["resources"]) > 0 and len(s["resourceTemplates"]) > 0,
          "its resources and templates listed (%d, %d)"
          % (len((s or {}).get("resources", [])), len((s or {}).get("resourceTemplates", []))))
    check(s and s["serverInfo"]["name"] == "mcp-servers/everything" and s["authStatus"] == "unsupported",
          "its serverInfo and authStatus (%s)" % (s and s.get("serverInfo")))
    all_now = statuses(peer)
    check(all_now["off"]["runtimeStatus"] == "disabled", "enabled = false: disabled")
    remote = wait_status(peer, "remote", lambda s: s["runtimeStatus"] == "failed")
    check(remote["runtimeStatus"] == "failed" and "cannot reach" in remote["toolsError"]
          and remote["httpOrigin"] == "http://127.0.0.1:9",
          "a url server nobody serves: failed, why, its origin without credentials (%s, %s)"
          % (remote["toolsError"], remote["httpOrigin"]))
    check(remote["authStatus"] == "unknown" and s["pluginId"] is None,
          "authStatus unknown for a url server that never answered, as Codex says (%s); "
          "pluginId null" % remote["authStatus"])

    # -- mcpServer/oauth/login: parley does no OAuth; Codex's own errors where Codex
    # -- would not log in either -------------------------------------------------------
    logins = {name: peer.call("mcpServer/oauth/login", {"name": name}).get("error", {})
              for name in ("nosuch", "everything", "remote")}
    check(logins["nosuch"].get("code") == -32600
          and logins["nosuch"].get("message") == "No MCP server named 'nosuch' found.",
          "oauth/login of an unknown name: Codex's -32600 (%s)" % logins["nosuch"])
    check(logins["everything"].get("code") == -32600 and logins["everything"].get("message")
          == "OAuth login is only supported for streamable HTTP servers.",
          "oauth/login of a stdio server: Codex's -32600 (%s)" % logins["everything"])
    said = logins["remote"].get("message", "")
    check(logins["remote"].get("code") == -32603
          and said.startswith("failed to login to MCP server 'remote': parley does not do OAuth")
          and "bearer_token_env_var" in said,
          "oauth/login of a url server: -32603 saying why parley cannot, and what to do (%s)"
          % logins["remote"])
    page = peer.call("mcpServerStatus/list", {"limit": 3})["result"]
    rest = peer.call("mcpServerStatus/list", {"cursor": page["nextCursor"]})["result"]
    names = [x["name"] for x in page["data"] + rest["data"]]
    check(len(page["data"]) == 3 and rest.get("nextCursor") is None and len(names) == 8
          and len(set(names)) == 8, "pages by cursor: %s" % names)
    one = peer.call("mcpServerStatus/list", {"serverName": "everything",
                                             "detail": "toolsAndAuthOnly"})["result"]["data"]
    check(len(one) == 1 and one[0]["resources"] == [] and len(one[0]["tools"]) == len(tools),
          "serverName and detail toolsAndAuthOnly")

    # -- hostile servers ------------------------------------------------------------
    for name, says in (("malformed", "not JSON-RPC 2.0 (not JSON)"),
                       ("oversized", "longer than 16 MiB"),
                       ("silent", "within 1 s (startup_timeout_sec)")):
        h = wait_status(peer, name, lambda s: s["runtimeStatus"] == "failed", timeout=10)
        check(h["runtimeStatus"] == "failed" and says in (h.get("toolsError") or ""),
              "%s: cut off with a clear status (%s)" % (name, h.get("toolsError")))
        r = peer.call("mcpServer/tool/call", {"server": name, "threadId": thread, "tool": "x"})
        check("cut off" in error_text(r), "%s: a call fails naming why (%s)" % (name, error_text(r)))

    # -- calls -------------------------------------------------------------------------
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "echo",
                                          "arguments": {"message": "hello parley"}})
    text = ((r.get("result") or {}).get("content") or [{}])[0].get("text")
    check(text == "Echo: hello parley", "echo answers (%s)" % (text or error_text(r)))
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "get-sum",
                                          "arguments": {"a": 2, "b": 40}})
    check("42" in json.dumps(r.get("result")), "get-sum answers (%s)" % json.dumps(r)[:200])
    uri = s["resources"][0]["uri"]
    r = peer.call("mcpServer/resource/read", {"server": "everything", "uri": uri})
    contents = (r.get("result") or {}).get("contents") or []
    check(contents and contents[0]["uri"] == uri and (contents[0].get("text") or contents[0].get("blob")),
          "a resource reads (%s: %d bytes)" % (uri, len(json.dumps(contents))))
    for params, says, what in (
            ({"server": "nowhere", "threadId": thread, "tool": "echo"},
             "unknown MCP server 'nowhere'", "an unknown server (as Codex, but -32603)"),
            ({"server": "everything", "tool": "echo"}, "missing field `threadId`", "no threadId"),
            ({"server": "everything", "threadId": "zz", "tool": "echo"}, "thread not found: zz",
             "a thread nobody has (as Codex)"),
            ({"server": "off", "threadId": thread, "tool": "shout"}, "disabled", "a disabled server")):
        r = peer.call("mcpServer/tool/call", params)
        code = -32603 if "unknown MCP server" in says else -32600
        check(r.get("error", {}).get("code") == code and says in error_text(r),
              "%s: error (%s)" % (what, error_text(r)))
    # A tool the server does not list is asked for all the same, as Codex
    # does: the server's own answer says it does not exist.
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread,
                                          "tool": "no-such-tool"})
    res = r.get("result") or {}
    check(res.get("isError") is True and "no-such-tool not found" in json.dumps(res),
          "a tool it lacks: the server's error result, as Codex (%s)" % json.dumps(r)[:200])
    r = peer.call("mcpServer/resource/read", {"server": "everything", "uri": "demo://nothing/here"})
    check("error" in r and "refused resources/read" in error_text(r),
          "an unknown resource: the server's error passed on (%s)" % error_text(r))

    # -- a call past tool_timeout_sec -----------------------------------------------------
    wait_status(peer, "slow", lambda s: s["runtimeStatus"] == "connected")
    t0 = time.monotonic()
    r = peer.call("mcpServer/tool/call", {"server": "slow", "threadId": thread, "tool": "wait"})
    took = time.monotonic() - t0
    check("did not answer tools/call `wait` within 1 s" in error_text(r) and took < 1.8,
          "an unanswered call fails at tool_timeout_sec (%.2f s: %s)" % (took, error_text(r)))
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "echo",
                                          "arguments": {"message": "still here"}})
    check("Echo: still here" in json.dumps(r), "parley keeps serving meanwhile")

    # -- a server that floods valid lines ----------------------------------------------------
    # 500,000 notifications (40 MB) written far faster than parley's actor
    # handles them: what is handed to the server's actor and not yet handled
    # is bounded (4 MiB with 64 bytes a line), so parley's memory stays flat
    # while the server waits on its full pipe (before, the whole flood queued
    # up as messages: about 150 MiB more). Its 5,000 log messages are logged
    # up to 2,000.
    wait_status(peer, "flood", lambda s: s["runtimeStatus"] == "connected")
    before = rss_kib(peer.proc.pid)
    i = peer.send("mcpServer/tool/call", {"server": "flood", "threadId": thread, "tool": "flood"})
    peak = before
    r = None
    deadline = time.monotonic() + 120
    while r is None and time.monotonic() < deadline:
        peak = max(peak, rss_kib(peer.proc.pid))
        try:
            r = peer.reply_to(i, timeout=0.02)
        except TimeoutError:
            pass
    check(r is not None and "flooded" in json.dumps(r),
          "a flooding server's answer comes after its flood (%s)" % json.dumps(r)[:200])
    growth = (peak - before) / 1024
    check(growth < 40, "while it floods, parley grows by %.1f MiB (bounded: < 40)" % growth)
    log = peer.log_text()
    logged = log.count("mcp event=server_log server=flood ")
    check(logged == 2000 and "mcp event=server_log_suppressed server=flood after_lines=2000" in log,
          "its log messages are logged up to 2,000 (%d), then suppressed" % logged)

    # -- the reference server killed mid-call ---------------------------------------------
    node = [p for p, cmd in children_of(peer.proc.pid) if index in cmd]
    check(len(node) == 1, "one server-everything process, a child of parley (%s)" % node)
    i = peer.send("mcpServer/tool/call", {"server": "everything", "threadId": thread,
                                          "tool": "trigger-long-running-operation",
                                          "arguments": {"duration": 30, "steps": 30}})
    time.sleep(0.5)
    if node:
        os.kill(node[0], signal.SIGKILL)
    r = peer.reply_to(i, timeout=10)
    check("killed by signal 9 during the call" in error_text(r),
          "the call in flight fails naming the exit (%s)" % error_text(r))
    # Once the new process runs, the hub has the status that said the old one
    # died (the server's actor told it before starting again): a connected
    # status from then on is the new process's.
    deadline = time.monotonic() + 15
    again = []
    while time.monotonic() < deadline:
        again = [p for p, cmd in children_of(peer.proc.pid) if index in cmd and p not in node]
        if again:
            break
        time.sleep(0.05)
    s = wait_status(peer, "everything", lambda s: s["runtimeStatus"] == "connected", timeout=15)
    check(again and s["runtimeStatus"] == "connected", "it comes back by itself (%s)" % again)
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "echo",
                                          "arguments": {"message": "again"}})
    check("Echo: again" in json.dumps(r), "and answers again (%s)" % json.dumps(r)[:200])
    now = [p for p, cmd in children_of(peer.proc.pid) if index in cmd]
    check(now == again and now != node, "one new process (%s -> %s)" % (node, now))

    # -- reload ------------------------------------------------------------------------------
    write_config(config, {
        "everything": dict(everything, enabled_tools=["echo", "get-sum"]),
        "good": fake("good"),
        "off": fake("good", enabled=False),
    })
    r = peer.call("config/mcpServer/reload", None)
    check(r.get("result") == {}, "config/mcpServer/reload answers {} (%s)" % r)
    s = wait_status(peer, "everything", lambda s: s["runtimeStatus"] == "connected"
                    and sorted(s["tools"]) == ["echo", "get-sum"])
    check(sorted(s["tools"]) == ["echo", "get-sum"], "a changed server restarts with its new "
          "enabled_tools (%s)" % sorted(s["tools"]))
    g = wait_status(peer, "good", lambda s: s["runtimeStatus"] == "connected")
    check(g["runtimeStatus"] == "connected", "an added server starts")
    check(set(statuses(peer)) == {"everything", "good", "off"}, "removed servers are gone")
    r = peer.call("mcpServer/tool/call", {"server": "good", "threadId": thread, "tool": "shout",
                                          "arguments": {"message": "reloaded"}})
    check("RELOADED" in json.dumps(r), "the added server answers (%s)" % json.dumps(r)[:200])
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread,
                                          "tool": "get-tiny-image"})
    check("is not enabled in config.toml" in error_text(r),
          "a tool left out by enabled_tools is refused (%s)" % error_text(r))
    with open(config, "a") as f:
        f.write("[mcp_servers.broken]\nargs = []\n")
    r = peer.call("config/mcpServer/reload", None)
    check(r.get("error", {}).get("code") == -32600 and "mcp_servers.broken" in error_text(r),
          "a config that cannot be used: an error naming the key, nothing changed (%s)"
          % error_text(r))
    check(set(statuses(peer)) == {"everything", "good", "off"}, "the servers as they were")

    # -- stop ---------------------------------------------------------------------------------
    left = children_of(peer.proc.pid)
    code = peer.stop()
    check(code == 0, "parley exits 0 when its input ends (%s)" % code)
    alive = [p for p, _ in left if os.path.exists("/proc/%d" % p)
             and open("/proc/%d/stat" % p).read().split()[2] != "Z"]
    check(not alive, "no server process is left (%s)" % alive)
    log = peer.log_text()
    check("mcp event=late_reply server=slow" in log, "the late answer is logged and dropped")
    check("mcp event=stderr server=everything" in log, "a server's stderr goes to parley's log")
    odd = [line for line in log.splitlines()
           if "event=unexpected_message" in line or "event=exception" in line
           or "event=unknown_reply" in line or "event=server_actor_died" in line]
    check(not odd, "no unexpected message, exception or stray reply in the log %s" % odd[:3])
    SCHEMA.check(check, peer, "parley", all_replies=True)
    print("%.1f s, %d failures" % (time.monotonic() - started, len(FAILURES)))
    if not FAILURES:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
