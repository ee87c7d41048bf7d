#!/usr/bin/env python3
"""parley's MCP shapes beside the real Codex 0.169's (issue 30), offline:
both app-servers read the same config.toml (three stdio servers:
server-everything and server-filesystem from npm and the suite's annotated
server; and a streamable-HTTP entry nothing listens at) and the same mock
model, and are asked the same:

- mcpServerStatus/list: each server's entry (its keys, the tools' names);
- mcpServer/tool/call of server-everything's echo, and of the fake
  server's tools that answer JSON-RPC errors;
- a turn whose model calls, as Codex offers them (a function inside the
  namespace tool mcp__SERVER): echo, get-tiny-image (an image),
  get-structured-content, get-annotated-message (text and an image),
  get-sum with a bad argument (an isError result), read_text_file (a
  structuredContent result) and of a missing file, the annotated server's
  `mixed` (images Codex takes and leaves out, audio, resources) and
  read_file, its `plain` (no annotations) and delete_file (destructive),
  which approval `never` refuses unasked, the fake server's `sign_in`
  (JSON-RPC error -32042 with data) and `broken` (-32000), the budget
  server's big results (long texts, a long structuredContent, big and
  hostile images: what the model's budget and Codex's image limits make of
  them), and a tool no server has. Compared: the MCP namespace tools
  the model is offered, whole; the mcpToolCall items as item/started and
  item/completed show them (ids and times aside); and the
  function_call_output after each call, byte for byte but for the wall
  time;
- mcpServer/oauth/login for a stdio server and for an unknown name.

Prints each answer, "same", "DIFFER" (both shown) or "known" (a difference
listed in KNOWN, with why), and exits 1 when any answer differs that is not
known (0 when all agree; 77 when Codex, npm or node cannot be had). A
script, not a ctest: Codex's start and its npm package make it slow and
dependent on the registry. Usage:

  mcp_codex_compare.py PARLEY_BINARY MOCK_BINARY NPM_CACHE_DIR [--verbose] [--dump=DIR]
                      [--token-limit=N]

--dump writes each side's answers whole to DIR/codex.json and DIR/parley.json.
--token-limit=N puts `tool_output_token_limit = N` into the config both read.
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import mcp_model_output  # noqa: E402
import mcp_npm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Differences known and left as they are: answer -> why (what is still
# compared of it: same()).
KNOWN = {
    "turn: output of a tool no server has":
        "parley's answer to a tool it does not offer names the tools it has after Codex's "
        "words (wire::unknown_tool_text); compared as a prefix",
    "turn: mcpToolCall item/completed":
        "Codex's error of a call the server answered with a JSON-RPC error goes on with a "
        "stack backtrace of its own (\"\\n\\nStack backtrace:\" and frames), which parley "
        "leaves out; compared without it",
    "turn: output of mcp__urlneeded/sign_in #1":
        "the same backtrace after Codex's text; compared without it",
    "turn: output of mcp__urlneeded/broken #1":
        "the same backtrace after Codex's text; compared without it",
    "mcpServer/oauth/login remote":
        "parley does no OAuth and says why where Codex says its discovery failed; compared "
        "as far as the server's name",
}


BUDGET_CALLS = [("budget", "long_text", {"bytes": 50000, "char": "offsets"}),
                ("budget", "long_structured", {"bytes": 50000, "char": "offsets"}),
                ("budget", "long_text", {"bytes": 3000, "char": "offsets", "parts": 6}),
                ("budget", "long_text", {"bytes": 30000, "char": "\u00e9"}),
                ("budget", "image", {"width": 4000, "height": 3000}),
                ("budget", "image", {"width": 1000, "height": 5000}),
                ("budget", "image", {"width": 3000, "height": 3000, "detail": "original"}),
                ("budget", "image", {"width": 5, "height": 4, "format": "gif"}),
                ("budget", "bomb", {}),
                ("budget", "junk_image", {})]
# The budget server's outputs: the same cut and the same images, but two
# things differ by nature and are compared as shapes (budget_shape()).
BUDGET_WHY = ("Codex cuts a tool output twice (the second cut takes out the first one's "
              "marker, so its marker counts the marker's own tokens, and its \"[omitted N text "
              "items ...]\" counts the first such part); parley cuts once and counts what it cut: "
              "the kept bytes are the same, the counts in the markers are compared as N. An image "
              "Codex re-encodes is compared by its type, size and detail (two encoders never give "
              "the same bytes)")


def budget_shape(output):
    """An output with the counts of its truncation markers as N and each
    image as its type, size and detail."""
    import base64
    import re
    import struct

    def text(t):
        t = re.sub("\u2026\\d+ (tokens|chars) truncated\u2026", "\u2026N \\1 truncated\u2026", t)
        return re.sub(r"^\[omitted \d+ text items \.\.\.\]$", "[omitted N text items ...]", t)

    if isinstance(output, str):
        return text(output)
    out = []
    for p in output or []:
        if p.get("type") == "input_image" and ";base64," in p.get("image_url", ""):
            url = p["image_url"]
            data = base64.b64decode(url.split(",", 1)[1])
            size = struct.unpack(">II", data[16:24]) if data[:4] == b"\x89PNG" else len(data)
            out.append({"image": url[5:url.index(";")], "size": list(size) if isinstance(size, tuple)
                        else size, "detail": p.get("detail")})
        elif p.get("type") == "input_text":
            out.append({"type": "input_text", "text": text(p.get("text", ""))})
        else:
            out.append(p)
    return out


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
    """An item without what differs by nature (ids, durations; Codex's
    items also carry startedAtMs and completedAtMs, which the 0.169 schema
    has on the notification, not the item: parley's sit there)."""
    return {k: v for k, v in item.items()
            if k not in ("id", "durationMs", "startedAtMs", "completedAtMs")}


def offered(request):
    """The MCP tools a model request offers: each namespace tool mcp__*,
    whole, in the order offered; a flat mcp__ function by its name."""
    return [t if t.get("type") == "namespace" else t.get("name")
            for t in request["body"].get("tools", []) if t.get("name", "").startswith("mcp__")]


CALLS = [("everything", "echo", {"message": "hello mcp"}),
         ("everything", "get-tiny-image", {}),
         ("everything", "get-structured-content", {"location": "New York"}),
         ("everything", "get-annotated-message", {"messageType": "error", "includeImage": True}),
         ("everything", "get-sum", {"a": 1, "b": "x"}),
         ("filesystem", "read_text_file", {"path": "WORK/hello.txt"}),
         ("filesystem", "read_text_file", {"path": "WORK/missing.txt"}),
         ("annot", "mixed", {}),
         ("annot", "read_file", {}),
         # Under approval `never`: refused unasked (no annotations; destructive).
         ("annot", "plain", {}),
         ("annot", "delete_file", {"path": "WORK/hello.txt"}),
         # The server's JSON-RPC errors: -32042 with its data, -32000 without.
         ("urlneeded", "sign_in", {}),
         ("urlneeded", "broken", {})] + BUDGET_CALLS
NO_SUCH_TOOL = ("everything", "no-such-tool", {})


def run(peer, mock, work, verbose):
    """Everything one app-server answers, as comparable JSON. The model
    calls MCP tools as Codex 0.169 offers them: the namespace mcp__SERVER,
    the tool's sanitised name in it."""
    got = {}
    data = wait_connected(peer, ["everything", "filesystem", "annot", "urlneeded", "budget"])
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
    for tool in ("sign_in", "broken"):
        r = peer.call("mcpServer/tool/call", {"server": "urlneeded", "threadId": thread,
                                              "tool": tool, "arguments": {}}, timeout=60)
        got["mcpServer/tool/call urlneeded %s" % tool] = r.get("result", r.get("error"))
    mock.forget()
    calls = [(s, t, json.loads(json.dumps(a).replace("WORK", work))) for s, t, a in CALLS]
    prompt = "\n".join("mock: tool mcp__%s/%s %s" % (s, t.replace("-", "_"), json.dumps(a))
                       for s, t, a in calls + [NO_SUCH_TOOL])
    turn = peer.call("turn/start", {"threadId": thread, "input": [
        {"type": "text", "text": prompt + "\nmock: say done"}]}, timeout=60)["result"]["turn"]["id"]
    started, completed, asked = [], [], []
    while True:
        m = peer.wait(lambda m: "method" in m, timeout=300)
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
    # Each call's output in the order called (the mock makes one call a
    # request), its wall time normalised.
    outputs = {}
    for req in reqs:
        for i in req["body"].get("input", []):
            if i.get("type") == "function_call_output":
                outputs.setdefault(i["call_id"], i["output"])
    calls_made = [(i.get("namespace"), i.get("name"), i["call_id"])
                  for req in reqs[-1:] for i in req["body"].get("input", [])
                  if i.get("type") == "function_call"]
    for ns, name, call_id in calls_made:
        out = outputs.get(call_id)
        if name == NO_SUCH_TOOL[1].replace("-", "_"):
            got["turn: output of a tool no server has"] = out
            continue
        got["turn: output of %s/%s #%d" % (ns, name, len([k for k in got if ("%s/%s" % (ns, name)) in k]) + 1)] \
            = {"header": mcp_model_output.has_header(out), "output": mcp_model_output.normalised(out)}
    for name in ("everything", "remote", "nosuch"):
        r = peer.call("mcpServer/oauth/login", {"name": name}, timeout=60)
        got["mcpServer/oauth/login %s" % name] = r.get("result", r.get("error"))
    if verbose:
        print(json.dumps(got, indent=1)[:20000])
    return got


def without_backtrace(answer):
    """Codex's answer with the stack backtrace its errors of a server's
    JSON-RPC error end with cut off (every string in it)."""
    if isinstance(answer, str):
        return answer.split("\n\nStack backtrace:", 1)[0]
    if isinstance(answer, list):
        return [without_backtrace(a) for a in answer]
    if isinstance(answer, dict):
        return {k: without_backtrace(v) for k, v in answer.items()}
    return answer


def same(key, c, p):
    """Whether parley's answer is Codex's (for a known difference: what is
    still compared of it)."""
    if key == "turn: mcpToolCall item/completed" \
            or key.startswith("turn: output of mcp__urlneeded/"):
        return without_backtrace(c) == p
    if key.startswith("turn: output of mcp__budget/"):
        return (c or {}).get("header") == (p or {}).get("header") \
            and budget_shape((c or {}).get("output")) == budget_shape((p or {}).get("output"))
    if key == "turn: output of a tool no server has":
        return isinstance(c, str) and isinstance(p, str) and p.startswith(c)
    if key == "mcpServer/oauth/login remote":
        prefix = "failed to login to MCP server 'remote': "
        return (c or {}).get("code") == (p or {}).get("code") \
            and str((c or {}).get("message")).startswith(prefix) \
            and str((p or {}).get("message")).startswith(prefix)
    return c == p


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
    limit = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--token-limit=")]
    with open(os.path.join(home, "config.toml"), "w") as f:
        if limit:
            f.write("tool_output_token_limit = %d\n" % int(limit[0]))
        f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
                '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\nrequires_openai_auth = false\n'
                '[mcp_servers.everything]\ncommand = "node"\nargs = %s\nstartup_timeout_sec = 30\n'
                '[mcp_servers.filesystem]\ncommand = "node"\nargs = %s\ncwd = %s\n'
                'startup_timeout_sec = 30\n'
                '[mcp_servers.annot]\ncommand = "%s"\nargs = %s\n'
                '[mcp_servers.urlneeded]\ncommand = "%s"\nargs = %s\n'
                '[mcp_servers.budget]\ncommand = "%s"\nargs = %s\n'
                '[mcp_servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nstartup_timeout_sec = 2\n'
                % (mock.url, json.dumps([everything, "stdio"]), json.dumps([filesystem, work]),
                   json.dumps(work), sys.executable,
                   json.dumps([os.path.join(HERE, "mcp_annotated_server.py"),
                               os.path.join(root, "annot.log")]),
                   sys.executable, json.dumps([os.path.join(HERE, "mcp_fake_server.py"), "urlneeded"]),
                   sys.executable, json.dumps([os.path.join(HERE, "mcp_budget_server.py")])))
    env = dict(os.environ, CODEX_HOME=home, HOME=user, no_proxy="127.0.0.1,localhost",
               NO_PROXY="127.0.0.1,localhost")
    env.pop("OPENAI_API_KEY", None)
    answers = {}
    try:
        for who, argv in (("codex", app_server_peer.CODEX + ["app-server"]),
                          ("parley", [parley, "app-server", "--home", home, "--cwd", work])):
            peer = app_server_peer.StdioPeer(argv, env, os.path.join(root, who + ".stderr"),
                                             client_name="mcp-compare")
            try:
                answers[who] = run(peer, mock, work, verbose)
            finally:
                peer.stop()
    finally:
        mock.stop()
    dump = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--dump=")]
    for who in answers if dump else []:
        with open(os.path.join(dump[0], who + ".json"), "w") as f:
            json.dump(answers[who], f, indent=1)
    differ = 0
    for key in answers["codex"]:
        c, p = answers["codex"][key], answers["parley"].get(key)
        ok = same(key, c, p)
        known = KNOWN.get(key) or (BUDGET_WHY if key.startswith("turn: output of mcp__budget/")
                                   and c != p else None)
        verdict = "same  " if ok and not known else "known " if ok else "DIFFER"
        differ += not ok
        print("%s %s" % (verdict, key))
        if known:
            print("  (%s)" % known)
        if not ok or (known and verbose):
            print("  codex: ", json.dumps(c, sort_keys=True)[:3000])
            print("  parley:", json.dumps(p, sort_keys=True)[:3000])
    for key in answers["parley"]:
        if key not in answers["codex"]:
            differ += 1
            print("DIFFER %s (parley only)" % key)
    print("%d of %d answers differ" % (differ, len(answers["codex"])))
    shutil.rmtree(root, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
