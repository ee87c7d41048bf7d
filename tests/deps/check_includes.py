#!/usr/bin/env python3
"""The dependency rules of README.md's architecture section, checked.

1. No include cycle between files (a header that reaches itself again).
2. Every #include from one folder into another is an allowed direction
   (ALLOWED below: the same table as the README). A new direction, or one
   pointing back up, fails with the file and line that introduced it.

Usage: check_includes.py SOURCE_DIR
"""
import os
import re
import sys

ROOTS = ("protocol", "actors", "transport")

# folder -> folders it may include from (its own is always allowed).
# Pure libraries (protocol, patch, rules, audit, model/wire, model/http,
# model/config) depend on nothing of parley's but protocol, and a pure folder
# holds only its pure library: the actors that keep the rule book and write
# the audit log sit in actors/approval. core includes only protocol.
ALLOWED = {
    "protocol": set(),
    "actors/patch": set(),
    "actors/approval/rules": set(),
    "actors/approval/audit": set(),
    "actors/core": {"protocol"},
    "actors/runtime": {"protocol", "actors/core", "actors/approval", "actors/approval/hooks",
                       "actors/approval/rules", "actors/approval/audit", "actors/threads",
                       "actors/store", "actors/model", "actors/model/config", "actors/cluster",
                       "actors/mcp"},
    "actors/cluster": {"protocol", "actors/core", "actors/approval/audit"},
    "actors/approval/hooks": {"protocol", "actors/core", "actors/threads"},
    "actors/approval": {"protocol", "actors/core", "actors/patch", "actors/approval/hooks",
                        "actors/approval/rules", "actors/approval/audit"},
    "actors/threads": {"protocol", "actors/core", "actors/patch", "actors/approval",
                       "actors/store"},
    "actors/store": {"protocol", "actors/core"},
    "actors/model": {"protocol", "actors/core", "actors/store", "actors/model/wire",
                     "actors/model/http", "actors/model/config"},
    "actors/model/wire": set(),
    "actors/model/http": set(),
    "actors/model/config": set(),
    "actors/sandbox": set(),
    "actors/files": {"protocol", "actors/core", "actors/patch"},
    "actors/mcp": {"protocol", "actors/core", "actors/model/config", "actors/model/http",
                   "actors/model/wire"},
    "actors/embed": {"protocol", "actors/core", "actors/runtime"},
    "transport": {"protocol", "actors/core", "actors/runtime", "actors/approval",
                  "actors/approval/hooks", "actors/approval/audit", "actors/approval/rules",
                  "actors/store", "actors/model/config", "actors/sandbox", "actors/files",
                  "actors/cluster", "actors/mcp", "transport/chat"},
    "transport/chat": {"protocol", "transport"},
}


def folder_of(path):
    parts = path.split("/")
    if parts[0] == "actors" and len(parts) > 2:
        if parts[1] in ("approval", "model") and len(parts) > 3:
            return "actors/" + parts[1] + "/" + parts[2]
        return "actors/" + parts[1]
    if parts[0] == "transport" and len(parts) > 2:
        return "transport/" + parts[1]
    return parts[0]


def main():
    src = sys.argv[1]
    includes = {}  # file -> [(line number, included file)]
    for root in ROOTS:
        for dirpath, _, names in os.walk(os.path.join(src, root)):
            for name in names:
                if not name.endswith((".hpp", ".cpp")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), src)
                found = []
                with open(os.path.join(src, path)) as f:
                    for number, line in enumerate(f, 1):
                        m = re.match(r'\s*#include "([^"]+)"', line)
                        if m and m.group(1).split("/")[0] in ROOTS:
                            found.append((number, m.group(1)))
                includes[path] = found
    problems = []
    for path, found in sorted(includes.items()):
        here = folder_of(path)
        if here not in ALLOWED:
            problems.append(f"{path}: folder {here} has no entry in the dependency table")
            continue
        for number, target in found:
            there = folder_of(target)
            if there != here and there not in ALLOWED[here]:
                problems.append(f"{path}:{number}: {here} must not include {there} ({target})")
    # Cycles among headers (a .cpp is never included).
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for _, target in includes.get(node, []):
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(includes):
        if node not in state:
            visit(node, [])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s); the rules are in README.md, section Architecture")
        return 1
    print(f"{len(includes)} files: no include cycle, every direction allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
