#!/usr/bin/env python3
"""MCP stdio servers run inside parley-sandbox (issue 30), through the real
`parley app-server` over stdio, the real launcher beside it, and a small MCP
server (mcp_probe_server.py) whose one tool `probe` tries to write
or read a path and says what happened:

- the default (workspace-write, network on): the server writes its cwd, not
  a folder outside its roots, and cannot read parley's home (hidden);
- sandbox_mode = "read-only": not even its cwd;
- sandbox_mode = "danger-full-access": it runs as configured (writes
  outside, reads parley's home);
- where `parley-sandbox --check` says this host cannot confine, a server
  that must be confined is cut off saying so, and a full-access one runs.

Usage: mcp_sandbox_test.py PARLEY_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


# -- the test --------------------------------------------------------------------

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def main():
    import app_server_peer
    parley = os.path.abspath(sys.argv[1])
    launcher = os.path.join(os.path.dirname(parley), "parley-sandbox")
    if os.path.exists(launcher):
        probe = subprocess.run([launcher, "--check"], capture_output=True, text=True)
        confines = probe.returncode == 0
        print("parley-sandbox --check:", probe.stdout.strip(), flush=True)
    else:
        confines = False
        print("no parley-sandbox beside", parley, flush=True)

    root = tempfile.mkdtemp(prefix="parley-mcp-sandbox-")
    home = os.path.join(root, "home")
    work = os.path.join(root, "work")
    os.makedirs(home)
    os.makedirs(work)
    secret = os.path.join(home, "secret.txt")
    with open(secret, "w") as f:
        f.write("parley's own\n")
    # Outside every writable root of a confined server (its cwd, /tmp): the
    # folder of the binary under test, which this user may write.
    outside = os.path.join(os.path.dirname(parley), "mcp-sandbox-probe-%d" % os.getpid())

    def server(**keys):
        table = {"command": sys.executable, "args": [os.path.join(HERE, "mcp_probe_server.py")],
                 "cwd": work, "startup_timeout_sec": 20}
        table.update(keys)
        return table

    servers = {"default": server(), "readonly": server(sandbox_mode="read-only"),
               "full": server(sandbox_mode="danger-full-access")}
    config = os.path.join(root, "config.toml")
    with open(config, "w") as f:
        for name, keys in servers.items():
            f.write("[mcp_servers.%s]\n" % name)
            for k, v in keys.items():
                f.write("%s = %s\n" % (k, json.dumps(v)))
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    peer = app_server_peer.StdioPeer([parley, "app-server", "--store=memory", "--home", home,
                                      "--config", config], env,
                                     os.path.join(root, "parley.stderr"), client_name="mcp-sandbox")
    try:
        thread = peer.start_thread()

        def status(name, timeout=20):
            deadline = time.monotonic() + timeout
            while True:
                data = peer.call("mcpServerStatus/list", {})["result"]["data"]
                s = {x["name"]: x for x in data}[name]
                if s["runtimeStatus"] != "starting" or time.monotonic() > deadline:
                    return s
                time.sleep(0.05)

        def probe_tool(name, **arguments):
            r = peer.call("mcpServer/tool/call", {"server": name, "threadId": thread, "tool": "probe",
                                                  "arguments": arguments})
            if "error" in r:
                return "error: " + r["error"]["message"]
            return r["result"]["content"][0]["text"]

        full = status("full")
        check(full["runtimeStatus"] == "connected", "danger-full-access: connected (%s)"
              % full.get("toolsError"))
        said = probe_tool("full", write=outside)
        check(said == "wrote" and os.path.exists(outside),
              "danger-full-access: writes outside its cwd (%s)" % said)
        if os.path.exists(outside):
            os.unlink(outside)
        said = probe_tool("full", read=secret)
        check(said == "read: parley's own", "danger-full-access: reads parley's home (%s)" % said)

        if not confines:
            for name in ("default", "readonly"):
                s = status(name)
                check(s["runtimeStatus"] == "failed" and "cannot be confined" in (s["toolsError"] or ""),
                      "%s: cut off, this host cannot confine it (%s)" % (name, s.get("toolsError")))
        else:
            s = status("default")
            check(s["runtimeStatus"] == "connected", "default: connected, confined (%s)"
                  % s.get("toolsError"))
            said = probe_tool("default", write=os.path.join(work, "made-here"))
            check(said == "wrote" and os.path.exists(os.path.join(work, "made-here")),
                  "default (workspace-write): writes its cwd (%s)" % said)
            said = probe_tool("default", write=outside)
            check(said.startswith("refused") and not os.path.exists(outside),
                  "default: cannot write outside its roots (%s)" % said)
            if os.path.exists(outside):
                os.unlink(outside)
            said = probe_tool("default", read=secret)
            check(said.startswith("refused"), "default: parley's home is hidden (%s)" % said)
            s = status("readonly")
            check(s["runtimeStatus"] == "connected", "read-only: connected (%s)" % s.get("toolsError"))
            said = probe_tool("readonly", write=os.path.join(work, "not-here"))
            check(said.startswith("refused") and not os.path.exists(os.path.join(work, "not-here")),
                  "read-only: cannot write even its cwd (%s)" % said)
            log = peer.log_text()
            check('server=default' in log and 'sandbox="workspace-write, network on"' in log
                  and 'sandbox="unconfined"' in log,
                  "the log says how each server is confined")
    finally:
        code = peer.stop()
    check(code == 0, "parley exits 0 at stdin's end (%s)" % code)
    if failures:
        print("stderr kept at", os.path.join(root, "parley.stderr"))
        return 1
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
