#!/usr/bin/env python3
"""`mcpServer/startupStatus/updated` through the real `parley app-server`
over stdio (issue 30), with small real MCP servers (mcp_probe_server.py) that
start slowly or crash, driven by config.toml and `config/mcpServer/reload`:

- a changed server restarts: `starting` then `ready`;
- a server still starting when a reload removes it: `cancelled`;
- a server that crashes after its handshake: `failed` with the exit in
  `error`, then by itself `starting` and `ready` again;
- a `url` server nobody serves: `starting`, then `failed` saying why;
- each notification valid against the Codex 0.169 schema, `threadId` null;
- a client that opted out of the method gets none.

Usage: mcp_startup_test.py PARLEY_BINARY SCHEMA_DIR
Exit 77 (skipped) without the schema.
"""
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import app_server_peer  # noqa: E402

METHOD = "mcpServer/startupStatus/updated"
PROBE = os.path.join(HERE, "mcp_probe_server.py")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def probe(*extra):
    return {"command": sys.executable, "args": [PROBE, *extra], "startup_timeout_sec": 20,
            "sandbox_mode": "danger-full-access"}


def write_config(path, servers):
    with open(path, "w") as f:
        for name, keys in servers.items():
            f.write("[mcp_servers.%s]\n" % name)
            for k, v in keys.items():
                f.write("%s = %s\n" % (k, json.dumps(v)))


def main():
    parley, schema_dir = sys.argv[1], sys.argv[2]
    schema_file = os.path.join(schema_dir, "v2", "McpServerStatusUpdatedNotification.json")
    if not os.path.exists(schema_file):
        print("SKIPPED: no Codex schema at", schema_dir)
        return 77
    import jsonschema
    with open(schema_file) as f:
        validator = jsonschema.Draft7Validator(json.load(f))

    root = tempfile.mkdtemp(prefix="parley-mcp-startup-")
    config = os.path.join(root, "config.toml")
    write_config(config, {"steady": probe()})
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    args = [parley, "app-server", "--store=memory", "--home", os.path.join(root, "home"),
            "--config", config]
    peer = app_server_peer.StdioPeer(args, env, os.path.join(root, "parley.stderr"),
                                     client_name="mcp-startup")
    seen = []

    def updates(name, count, timeout=20):
        """The next `count` updates for `name`, in order."""
        out = []
        while len(out) < count:
            m = peer.wait(lambda m: m.get("method") == METHOD and m["params"]["name"] == name,
                          timeout)
            seen.append(m["params"])
            out.append(m["params"])
        return out

    def reload(servers):
        write_config(config, servers)
        r = peer.call("config/mcpServer/reload", None)
        check(r.get("result") == {}, "reload answers {} (%s)" % r)

    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            data = peer.call("mcpServerStatus/list", {})["result"]["data"]
            if data and data[0]["runtimeStatus"] == "connected":
                break
            time.sleep(0.05)
        peer.kept = [m for m in peer.kept if m.get("method") != METHOD]  # before this point: racy

        reload({"steady": dict(probe(), tool_timeout_sec=30)})
        got = [u["status"] for u in updates("steady", 2)]
        check(got == ["starting", "ready"], "a changed server: starting, ready (%s)" % got)

        reload({"steady": dict(probe(), tool_timeout_sec=30), "slow": probe("--slow-start", "30")})
        got = updates("slow", 1)[0]
        check(got["status"] == "starting", "an added server: starting (%s)" % got)
        reload({"steady": dict(probe(), tool_timeout_sec=30)})
        got = updates("slow", 1)[0]
        check(got["status"] == "cancelled" and got["error"] is None,
              "removed while starting: cancelled (%s)" % got)

        reload({"steady": dict(probe(), tool_timeout_sec=30), "crashy": probe("--exit-after", "0.3"),
                "remote": {"url": "http://127.0.0.1:9/mcp"}})  # nobody listens
        got = updates("crashy", 4)
        states = [u["status"] for u in got]
        check(states == ["starting", "ready", "failed", "starting"],
              "a crash: starting, ready, failed, then starting again by itself (%s)" % states)
        check("exit" in (got[2]["error"] or ""), "the failure names the exit (%s)" % got[2]["error"])
        got = updates("remote", 2)
        check([u["status"] for u in got] == ["starting", "failed"] and "cannot reach" in (got[1]["error"] or ""),
              "a url server nobody serves: starting, failed naming why (%s)" % got)
    finally:
        code = peer.stop()
    check(code == 0, "parley exits 0 (%s)" % code)
    bad = [(u, e.message) for u in seen for e in validator.iter_errors(u)]
    check(not bad and all(u["threadId"] is None for u in seen),
          "%d updates valid against McpServerStatusUpdatedNotification, threadId null (%s)"
          % (len(seen), bad[:2]))

    # A client that opted out of the method: a restart shows it nothing.
    write_config(config, {"steady": probe()})
    opted = OptedOutPeer(args, env, os.path.join(root, "quiet.stderr"))
    try:
        write_config(config, {"steady": dict(probe(), tool_timeout_sec=31)})
        opted.call("config/mcpServer/reload", None)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            data = opted.call("mcpServerStatus/list", {})["result"]["data"]
            if data and data[0]["runtimeStatus"] == "connected" and data[0]["tools"]:
                break
            time.sleep(0.05)
        time.sleep(0.2)
        check(not any(METHOD in line for line in opted.lines),
              "a client that opted out of %s gets none" % METHOD)
    finally:
        opted.stop()

    if failures:
        print("stderr kept at", os.path.join(root, "parley.stderr"))
        return 1
    shutil.rmtree(root, ignore_errors=True)
    return 0


class OptedOutPeer(app_server_peer.StdioPeer):
    """A peer whose initialize opts out of the startup updates."""

    def call(self, method, params, timeout=20):
        if method == "initialize":
            params = dict(params, capabilities={"optOutNotificationMethods": [METHOD]})
        return super().call(method, params, timeout)


if __name__ == "__main__":
    sys.exit(main())
