#!/usr/bin/env python3
"""A stdio MCP server whose tools carry annotations, for mcp_approvals: each
call is appended to LOG ("call TOOL ARGS-JSON"), so a test counts how often
a tool really ran.

  delete_file  destructiveHint: true     (Codex asks before calling it)
  read_file    readOnlyHint: true        (runs unasked)
  plain        no annotations            (asks in `auto` mode: fails closed)
  wipe         destructiveHint: true, title and description (its approval_mode
               in the test's config decides)
  ask          readOnlyHint: true; asks the user through elicitation/create
               and answers with the action it got back
  shred        destructiveHint: true (mcp_approvals accepts it "always")
  profile      readOnlyHint: true; asks for a form (a required text field, an
               enum, a boolean: the kinds the Codex TUI can show), appends
               "answer ELICIT-RESULT-JSON" to LOG and returns what it got
  mixed        readOnlyHint: true; answers content of every kind (text, images
               with and without a detail, audio, a resource, a resource link), for mcp_codex_compare's outputs

Usage: mcp_annotated_server.py LOG
"""
import json
import sys
from mcp_stdio_server import send, send_initialized

TOOLS = [
    {"name": "delete_file", "inputSchema": {"type": "object"},
     "annotations": {"destructiveHint": True}},
    {"name": "read_file", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "plain", "inputSchema": {"type": "object"}},
    {"name": "wipe", "title": "Wipe the disk", "description": "Erases everything.",
     "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}},
    {"name": "ask", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "shred", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}},
    {"name": "profile", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "mixed", "description": "Answers every kind of content.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
     "annotations": {"readOnlyHint": True}},
]

MIXED = [
    {"type": "text", "text": "first"},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    {"type": "image", "data": "R0lGODlh", "mimeType": "image/gif", "_meta": {"codex/imageDetail": "low"}},
    {"type": "image", "data": "data:image/png;base64,AAAA", "mimeType": "image/png", "_meta": {"codex/imageDetail": "original"}},
    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
    {"type": "resource_link", "uri": "file:///b.txt", "name": "b.txt"},
    {"type": "text", "text": "last", "_meta": {"note": 1}},
]

PROFILE_FORM = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name", "description": "Your name"},
    "colour": {"type": "string", "title": "Colour", "description": "Your favourite colour",
               "enum": ["red", "green", "blue"], "enumNames": ["Red", "Green", "Blue"]},
    "subscribe": {"type": "boolean", "title": "Subscribe", "description": "Send me news"}}}


def main():
    log = sys.argv[1]
    waiting = {}  # our elicitation's id -> the tools/call it answers (and its tool)
    for line in sys.stdin:
        m = json.loads(line)
        if "method" not in m:
            call, tool = waiting.pop(m.get("id"), (None, None))
            if call is None:
                continue
            result = m.get("result") or {}
            said = "asked: " + result.get("action", "error")
            if tool == "profile":
                with open(log, "a") as f:
                    f.write("answer %s\n" % json.dumps(result, sort_keys=True))
                said += " " + json.dumps(result.get("content"), sort_keys=True)
            send({"jsonrpc": "2.0", "id": call,
                  "result": {"content": [{"type": "text", "text": said}]}})
            continue
        if "id" not in m:
            continue
        i, method, params = m["id"], m["method"], m.get("params") or {}
        if method == "initialize":
            send_initialized(i, params, "annotated")
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": i, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            with open(log, "a") as f:
                f.write("call %s %s\n" % (name, json.dumps(args, sort_keys=True)))
            if name in ("ask", "profile"):
                eid = "e%s" % i
                waiting[eid] = (i, name)
                form = PROFILE_FORM if name == "profile" else {"type": "object", "properties": {}}
                send({"jsonrpc": "2.0", "id": eid, "method": "elicitation/create", "params": {
                    "message": "Who are you?" if name == "profile" else "Go on?",
                    "requestedSchema": form}})
                continue
            if name == "mixed":
                send({"jsonrpc": "2.0", "id": i, "result": {"content": MIXED}})
                continue
            send({"jsonrpc": "2.0", "id": i,
                  "result": {"content": [{"type": "text", "text": "%s done" % name}]}})
        else:
            send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
