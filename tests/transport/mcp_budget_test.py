#!/usr/bin/env python3
"""What the model is sent of big MCP results, through the real `parley
app-server` over stdio, the real mock model over loopback HTTP and the
suite's budget server (mcp_budget_server.py), as the real Codex 0.169 sends
it (mcp_codex_compare.py sets both side by side):

- a 50 KB text: its first and last 5982 bytes around "…9509 tokens
  truncated…" (the model's budget, 2500 tokens and 20% for an unknown
  model, less the wall-time header's 9 tokens);
- 50 KB of structuredContent: the output text's first and last 6000 bytes;
- six 3000-byte texts: three whole, the fourth cut, "[omitted 2 text items
  ...]" for the rest;
- a 4000x3000 PNG: a 1824x1368 PNG (2048 a side, 2500 32-pixel patches);
  "original" detail: "high" and its limits (3000x3000 -> 1600x1600); a GIF:
  a PNG;
- a PNG header claiming 100000x100000 and an image that is none: "image
  content omitted because it could not be processed";
- the mcpToolCall items the client gets keep every result whole;
- an image is made ready for the model off the scheduler: with one worker
  (`--threads 1`), another thread's turn, started when the image's call
  starts, completes while the image is scaled (about 0.6 s of CPU);
- `tool_output_token_limit` in the config replaces the model's budget.
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_budget_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import base64
import json
import os
import shutil
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402
import mcp_budget_server  # noqa: E402
import mcp_model_output  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
FAILURES = []
UNREADABLE = "image content omitted because it could not be processed"

CALLS = [("long_text", {"bytes": 50000, "char": "offsets"}),
         ("long_structured", {"bytes": 50000, "char": "offsets"}),
         ("long_text", {"bytes": 3000, "char": "offsets", "parts": 6}),
         ("long_text", {"bytes": 30000, "char": "\u00e9"}),
         ("image", {"width": 4000, "height": 3000}),
         ("image", {"width": 3000, "height": 3000, "detail": "original"}),
         ("image", {"width": 5, "height": 4, "format": "gif"}),
         ("bomb", {}),
         ("junk_image", {})]


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def cut(text, budget):
    """Codex's cut of `text` to `budget` bytes under a token policy (this
    suite's texts are ASCII, so no character boundary moves it)."""
    b = text.encode()
    if len(b) <= budget:
        return text
    left = budget // 2
    removed = len(b) - budget
    return (b[:left].decode() + "\u2026%d tokens truncated\u2026" % ((removed + 3) // 4)
            + b[len(b) - (budget - left):].decode())


def image_of(part):
    """(mime, width, height) of an input_image part's PNG data URL."""
    url = part["image_url"]
    mime = url[5:url.index(";")]
    data = base64.b64decode(url.split(",", 1)[1])
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return mime, None, None
    return (mime,) + struct.unpack(">II", data[16:24])


def main():
    root = tempfile.mkdtemp(prefix="parley-mcp-budget-")
    home = os.path.join(root, "home")
    os.makedirs(home)
    mock = app_server_peer.Mock(MOCK)
    with open(os.path.join(root, "config.toml"), "w") as f:
        f.write('[mcp_servers.budget]\ncommand = "%s"\nargs = %s\n'
                % (sys.executable, json.dumps([os.path.join(HERE, "mcp_budget_server.py")])))
    env = dict(os.environ, MOCK_KEY="sk-test")
    env.pop("CODEX_HOME", None)
    command = [PARLEY, "app-server", "--home", home, "--cwd", root, "--config", os.path.join(root, "config.toml"),
               "-c", "model=mock-model", "-c", "model_provider=mock",
               "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
               "-c", "model_providers.mock.env_key=MOCK_KEY"]
    peer = app_server_peer.StdioPeer(command, env, os.path.join(root, "parley.stderr"),
                                     client_name="mcp-budget-test")
    try:
        run(peer, mock, root)
    finally:
        peer.stop()
    one_worker = app_server_peer.StdioPeer(
        command[:2] + ["--threads", "1", "--home", os.path.join(root, "home1")] + command[4:]
        + ["-c", "tool_output_token_limit=500"], env,
        os.path.join(root, "parley1.stderr"), client_name="mcp-budget-test")
    try:
        scaling_leaves_the_worker_free(one_worker, root)
        the_config_sets_the_budget(one_worker, mock, root)
    finally:
        one_worker.stop()
        mock.stop()
    codex_schema.Schema(SCHEMA_DIR, {
        "thread/start": "v2/ThreadStartResponse", "turn/start": "v2/TurnStartResponse",
        "mcpServerStatus/list": "v2/ListMcpServerStatusResponse"}).check(check, peer)
    if not FAILURES:
        shutil.rmtree(root, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


def wait_for_budget_server(peer):
    for _ in range(200):
        data = peer.call("mcpServerStatus/list", {})["result"]["data"]
        if any(s["name"] == "budget" and s.get("tools") for s in data):
            return
        time.sleep(0.05)


def scaling_leaves_the_worker_free(peer, root):
    """One scheduler worker: thread A's tool returns a 4000x3000 PNG (the
    server has it made already, so it answers at once); thread B's turn
    starts when A's call does. Scaled on the worker, the image would hold
    B's turn until A's item completed; scaled on a thread of its own, B's
    turn completes first."""
    wait_for_budget_server(peer)
    a = peer.start_thread(cwd=root, approvalPolicy="never")
    b = peer.start_thread(cwd=root, approvalPolicy="never")
    # The server makes the PNG once and keeps it: the call below answers at once.
    args = json.dumps({"width": 4000, "height": 3000})
    warm = peer.start_turn(a, "mock: tool mcp__budget/image %s\nmock: say warm" % args)
    peer.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == warm, timeout=120)
    turn_a = peer.start_turn(a, "mock: tool mcp__budget/image %s\nmock: say done" % args)
    peer.wait(lambda m: m.get("method") == "item/started" and m["params"]["turnId"] == turn_a
              and m["params"]["item"]["type"] == "mcpToolCall", timeout=60)
    turn_b = peer.start_turn(b, "mock: say hello")
    order = []
    while len(order) < 2:
        m = peer.wait(lambda m: (m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn_b)
                      or (m.get("method") == "item/completed" and m["params"]["turnId"] == turn_a
                          and m["params"]["item"]["type"] == "mcpToolCall"), timeout=120)
        order.append("B's turn" if m["method"] == "turn/completed" else "A's image item")
    check(order == ["B's turn", "A's image item"],
          "with one worker, another turn completes while a big image is scaled: %s" % order)


def the_config_sets_the_budget(peer, mock, root):
    """tool_output_token_limit = 500 replaces the model's 2500 (Codex's 20%
    still added): a 50 KB text keeps its first and last (600 - 9) * 2 bytes."""
    thread = peer.start_thread(cwd=root, approvalPolicy="never")
    turn = peer.start_turn(thread, 'mock: tool mcp__budget/long_text {"bytes": 50000, "char": "offsets"}'
                           "\nmock: say cut")
    peer.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn, timeout=60)
    last = mock.requests()[-1]["body"]["input"]
    outs = [i["output"] for i in last if i.get("type") == "function_call_output"]
    text0 = mcp_budget_server.long_text(0, 50000, "offsets")
    check(outs and mcp_model_output.normalised(outs[-1])
          == [{"type": "input_text", "text": mcp_model_output.WALL_TIME},
              {"type": "input_text", "text": cut(text0, (600 - 9) * 4)}],
          "tool_output_token_limit = 500: a 50 KB text is cut to 600 tokens less the header's 9")


def run(peer, mock, root):
    wait_for_budget_server(peer)
    thread = peer.start_thread(cwd=root, approvalPolicy="never")
    prompt = "\n".join("mock: tool mcp__budget/%s %s" % (t, json.dumps(a)) for t, a in CALLS)
    turn = peer.start_turn(thread, prompt + "\nmock: say done")
    completed = []
    while True:
        m = peer.wait(lambda m: "method" in m, timeout=120)
        if "id" in m:  # a server request (an approval, should one come): accepted
            peer.write({"id": m["id"], "result": {"action": "accept", "content": {}, "decision": "accept"}})
            continue
        item = (m.get("params") or {}).get("item") or {}
        if m["method"] == "item/completed" and item.get("type") == "mcpToolCall":
            completed.append(item)
        if m["method"] == "turn/completed" and m["params"]["turn"]["id"] == turn:
            break
    last = mock.requests()[-1]["body"]["input"]
    calls = [i["call_id"] for i in last if i.get("type") == "function_call"]
    outs = {i["call_id"]: i["output"] for i in last if i.get("type") == "function_call_output"}
    if not check(len(calls) == len(CALLS) and all(c in outs for c in calls),
                 "the model got an output for each of the %d calls" % len(CALLS)):
        return
    out = [mcp_model_output.normalised(outs[c]) for c in calls]
    header = {"type": "input_text", "text": mcp_model_output.WALL_TIME}
    raw = [outs[c] for c in calls]
    text0 = mcp_budget_server.long_text(0, 50000, "offsets")

    # 1. One long text: the header costs ceil(33 / 4) = 9 of the 3000 tokens.
    check(out[0] == [header, {"type": "input_text", "text": cut(text0, (3000 - 9) * 4)}],
          "a 50 KB text: its first and last 5982 bytes around \"…9509 tokens truncated…\"")
    check("\u20269509 tokens truncated\u2026" in raw[0][1]["text"], "the marker counts the tokens cut")
    # 2. structuredContent: one text, cut as a whole.
    whole = raw[1][:raw[1].index("\n{")] + "\n" + json.dumps({"text": text0}, separators=(",", ":"))
    check(raw[1] == cut(whole, 12000), "50 KB of structuredContent: the first and last 6000 bytes")
    # 3. Six parts of 3000 bytes (750 tokens): 9 + 3 x 750 spent, the fourth
    # cut to 741 tokens, the last two left out.
    parts = [mcp_budget_server.long_text(i, 3000, "offsets") for i in range(6)]
    check(out[2] == [header] + [{"type": "input_text", "text": p} for p in parts[:3]]
          + [{"type": "input_text", "text": cut(parts[3], 741 * 4)},
             {"type": "input_text", "text": "[omitted 2 text items ...]"}],
          "six 3000-byte texts: three whole, the fourth cut, two counted as omitted")
    # 4. Two-byte characters: never split (both ends whole characters).
    t = raw[3][1]["text"]
    check(t.startswith("HEAD-0|\u00e9") and t.endswith("\u00e9|TAIL-0") and "tokens truncated" in t
          and len(t.encode()) <= (3000 - 9) * 4 + 40, "a text of two-byte characters is cut between them")
    # 5. Images.
    img = [p for p in out[4] if p["type"] == "input_image"]
    check(len(img) == 1 and image_of(img[0]) == ("image/png", 1824, 1368) and img[0]["detail"] == "high",
          "a 4000x3000 PNG goes as a 1824x1368 PNG %s" % [image_of(p) for p in img])
    img = [p for p in out[5] if p["type"] == "input_image"]
    check(len(img) == 1 and image_of(img[0]) == ("image/png", 1600, 1600) and img[0]["detail"] == "high",
          "\"original\" detail goes as high: 3000x3000 -> 1600x1600")
    img = [p for p in out[6] if p["type"] == "input_image"]
    check(len(img) == 1 and image_of(img[0]) == ("image/png", 5, 4), "a GIF goes as a PNG")
    for i, what in ((7, "a PNG header claiming 100000x100000"), (8, "bytes that are no image")):
        check(out[i] == [header, {"type": "input_text", "text": UNREADABLE}], "%s: %s" % (what, UNREADABLE))
    # 6. The client's items keep everything.
    by_tool = {}
    for item in completed:
        by_tool.setdefault(item["tool"], []).append(item)
    first = (by_tool.get("long_text") or [{}])[0].get("result") or {}
    check(((first.get("content") or [{}])[0]).get("text") == text0,
          "the mcpToolCall item keeps the whole 50 KB text")
    big = (by_tool.get("image") or [{}])[0].get("result") or {}
    data = [b for b in big.get("content") or [] if b.get("type") == "image"]
    check(data and base64.b64decode(data[0]["data"]) == mcp_budget_server.png(4000, 3000),
          "the mcpToolCall item keeps the image as the server sent it")


if __name__ == "__main__":
    sys.exit(main())
