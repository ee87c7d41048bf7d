#!/usr/bin/env python3
"""parley's MCP shapes beside the real Codex 0.169's (issue 30), offline:
both app-servers read the same config.toml (two stdio servers,
server-everything and server-filesystem from npm, and a streamable-HTTP
entry nothing listens at) and the same mock model, and are asked the same:

- mcpServerStatus/list: each server's entry (its keys, the tools' names);
- mcpServer/tool/call of server-everything's echo;
- a turn whose model calls echo, read_text_file (a structuredContent
  result), read_text_file of a missing file (an isError result) and a tool
  no server has: the mcpToolCall items as item/started and item/completed
  show them (ids and durations aside) and the function_call_output the
  model is sent after each;
- mcpServer/oauth/login for a stdio server and for an unknown name.

Prints each answer that differs, side by side, and exits 1 when any does
(0 when all agree; 77 when Codex, npm or node cannot be had). A script,
not a ctest: Codex's start and its npm package make it slow and
dependent on the registry. Usage:

  mcp_codex_compare.py PARLEY_BINARY MOCK_BINARY NPM_CACHE_DIR [--verbose] [--namespaced]

The mock calls Codex's MCP tools as Codex offers them (`mock: tool
mcp__SERVER/TOOL`, a call inside the namespace tool), parley's by their
flat names unless --namespaced.
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import mcp_npm  # noqa: E402


def wait_connected(peer, names, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        r = peer.call("mcpServerStatus/list", {}, timeout=60)
        data = (r.get("result") or {}).get("data") or []
        ready = {s["name"] for s in data if s.get("tools")}
        if set(names) <= ready or time.monotonic() > deadline:
            return data
        time.sleep(0.2)


def status_shape(data):
    out = {}
    for s in data:
        out[s["name"]] = {"keys": sorted(s), "tools": sorted(s.get("tools") or {}),
                          "authStatus": s.get("authStatus"),
                          "resources": len(s.get("resources") or []),
                          "resourceTemplates": len(s.get("resourceTemplates") or [])}
    return out


def strip(item):
    """An item without what differs by nature (ids, durations)."""
    return {k: v for k, v in item.items() if k not in ("id", "durationMs")}


def offered(request):
    """The MCP tools a model request offers: namespace -> [function names]
    (a flat mcp__SERVER__TOOL function counts as namespace "")."""
    out = {}
    for t in request["body"].get("tools", []):
        name = t.get("name", "")
        if t.get("type") == "namespace" and name.startswith("mcp__"):
            out[name] = sorted(x.get("name") for x in t.get("tools", []))
        elif name.startswith("mcp__"):
            out.setdefault("", []).append(name)
    return {k: sorted(v) for k, v in out.items()}


def run(peer, mock, work, verbose, namespaced):
    """Everything one app-server answers, as comparable JSON. `namespaced`:
    the model calls MCP tools as Codex 0.169 offers them (the namespace
    mcp__SERVER, the tool's sanitised name in it), else by the flat name."""
    got = {}
    data = wait_connected(peer, ["everything", "filesystem"])
    got["mcpServerStatus/list"] = status_shape(data)
    thread = peer.call("thread/start", {"cwd": work, "approvalPolicy": "never",
                                        "sandbox": "workspace-write"}, timeout=90)
    thread = thread["result"]["thread"]["id"]
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "echo",
                                          "arguments": {"message": "hi"}}, timeout=60)
    got["mcpServer/tool/call echo"] = r.get("result", r.get("error"))
    r = peer.call("mcpServer/tool/call", {"server": "everything", "threadId": thread, "tool": "nosuch",
                                          "arguments": {}}, timeout=60)
    got["mcpServer/tool/call unknown tool"] = r.get("result", r.get("error"))
    mock.forget()
    calls = [("everything", "echo", {"message": "hello mcp"}),
             ("filesystem", "read_text_file", {"path": os.path.join(work, "hello.txt")}),
             ("filesystem", "read_text_file", {"path": os.path.join(work, "missing.txt")}),
             ("everything", "no-such-tool", {})]
    def called(server, tool):
        if namespaced:
            return "mcp__%s/%s" % (server, tool.replace("-", "_"))
        return "mcp__%s__%s" % (server, tool)
    prompt = "\n".join("mock: tool %s %s" % (called(s, t), json.dumps(a)) for s, t, a in calls)
    turn = peer.call("turn/start", {"threadId": thread, "input": [
        {"type": "text", "text": prompt + "\nmock: say done"}]}, timeout=60)["result"]["turn"]["id"]
    started, completed, asked = [], [], []
    while True:
        m = peer.wait(lambda m: "method" in m, timeout=120)
        if "id" in m:  # a server request (an approval): accepted, and kept
            asked.append({"method": m["method"], "params": m.get("params")})
            peer.write({"id": m["id"], "result": {"action": "accept", "content": {},
                                                  "decision": "accept"}})
            continue
        params = m.get("params") or {}
        item = params.get("item") or {}
        if item.get("type") == "mcpToolCall":
            (started if m["method"] == "item/started" else completed).append(strip(item))
        if m["method"] == "turn/completed" and params["turn"]["id"] == turn:
            break
    got["turn: mcpToolCall item/started"] = started
    got["turn: mcpToolCall item/completed"] = completed
    got["turn: server requests"] = asked
    reqs = mock.requests()
    got["turn: MCP tools offered to the model"] = offered(reqs[0]) if reqs else None
    outputs = []
    for req in reqs:
        for i in req["body"].get("input", []):
            if i.get("type") == "function_call_output" and i not in outputs:
                outputs.append(i)
    got["turn: function_call_output"] = [{k: v for k, v in o.items() if k != "call_id"}
                                         for o in outputs]
    for name in ("everything", "remote", "nosuch"):
        r = peer.call("mcpServer/oauth/login", {"name": name}, timeout=60)
        got["mcpServer/oauth/login %s" % name] = r.get("result", r.get("error"))
    if verbose:
        print(json.dumps(got, indent=1))
    return got


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    parley, mock_bin, cache = args[:3]
    why = app_server_peer.codex_unavailable()
    everything = mcp_npm.install_everything(cache)
    filesystem = mcp_npm.install_filesystem(cache)
    if why or not everything or not filesystem:
        print("SKIPPED:", why or "an MCP server could not be installed")
        return 77
    root = tempfile.mkdtemp(prefix="parley-mcp-compare-")
    home, work, user = (os.path.join(root, d) for d in ("home", "work", "user"))
    for d in (home, work, user):
        os.makedirs(d)
    with open(os.path.join(work, "hello.txt"), "w") as f:
        f.write("hello from the workspace\n")
    mock = app_server_peer.Mock(mock_bin)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
                '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\nrequires_openai_auth = false\n'
                '[mcp_servers.everything]\ncommand = "node"\nargs = %s\nstartup_timeout_sec = 30\n'
                '[mcp_servers.filesystem]\ncommand = "node"\nargs = %s\ncwd = %s\n'
                'startup_timeout_sec = 30\n'
                '[mcp_servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nstartup_timeout_sec = 2\n'
                % (mock.url, json.dumps([everything, "stdio"]), json.dumps([filesystem, work]),
                   json.dumps(work)))
    env = dict(os.environ, CODEX_HOME=home, HOME=user, no_proxy="127.0.0.1,localhost",
               NO_PROXY="127.0.0.1,localhost")
    env.pop("OPENAI_API_KEY", None)
    answers = {}
    try:
        for who, argv in (("codex", app_server_peer.CODEX + ["app-server"]),
                          ("parley", [parley, "app-server", "--home", home, "--cwd", work])):
            namespaced = who == "codex" or "--namespaced" in sys.argv
            peer = app_server_peer.StdioPeer(argv, env, os.path.join(root, who + ".stderr"),
                                             client_name="mcp-compare")
            try:
                answers[who] = run(peer, mock, work, verbose, namespaced)
            finally:
                peer.stop()
    finally:
        mock.stop()
    differ = 0
    for key in answers["codex"]:
        c, p = answers["codex"][key], answers["parley"].get(key)
        same = c == p
        differ += not same
        print("%s %s" % ("same  " if same else "DIFFER", key))
        if not same:
            print("  codex: ", json.dumps(c, sort_keys=True)[:1500])
            print("  parley:", json.dumps(p, sort_keys=True)[:1500])
    print("%d of %d answers differ" % (differ, len(answers["codex"])))
    shutil.rmtree(root, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
