#!/usr/bin/env python3
"""fs/* (issue 29) through the real `parley app-server` on stdio, on real
files: every method's answer, validated against Codex 0.169's schema, and the
confinement around it: relative paths, `..`, absolute paths outside the
roots, symlinks out (and in), a hard link to a file outside, parley's home
(also where a root contains it), a file over the cap, a fifo, a directory
swapped for a symlink while it is read, roots that a thread/start adds, and
fs/watch's notifications.

Usage: files_test.py PARLEY_BINARY SCHEMA_DIR
"""
import base64
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_server_peer import StdioPeer  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
SCHEMA_DIR = sys.argv[2] if len(sys.argv) > 2 else ""
failures = []
VALIDATORS = {}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def load_schema():
    path = os.path.join(SCHEMA_DIR, "codex_app_server_protocol.v2.schemas.json")
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is None or not os.path.exists(path):
        print("NOTE: schema validation skipped (no schema at %r or no python3-jsonschema)" % path)
        return
    with open(path) as f:
        defs = json.load(f)["definitions"]
    for name in defs:
        if name.startswith("Fs"):
            VALIDATORS[name] = jsonschema.Draft7Validator({"$ref": "#/definitions/" + name,
                                                           "definitions": defs})


RESPONSE = {"fs/readFile": "FsReadFileResponse", "fs/writeFile": "FsWriteFileResponse",
            "fs/createDirectory": "FsCreateDirectoryResponse",
            "fs/getMetadata": "FsGetMetadataResponse",
            "fs/readDirectory": "FsReadDirectoryResponse", "fs/remove": "FsRemoveResponse",
            "fs/copy": "FsCopyResponse", "fs/watch": "FsWatchResponse",
            "fs/unwatch": "FsUnwatchResponse"}
validated = set()


def validate(kind, obj):
    v = VALIDATORS.get(kind)
    if v is None:
        return
    errors = list(v.iter_errors(obj))
    check(not errors, "schema: %s %s" % (kind, errors[0].message[:200] if errors else "valid"))
    validated.add(kind)


class Server:
    def __init__(self, root, cwd, home, store="memory"):
        self.peer = StdioPeer([BINARY, "app-server", "--store=" + store, "--home", home,
                               "--cwd", cwd, "--log-level=warn"],
                              dict(os.environ), os.path.join(root, "server-%d.log" % id(self)),
                              client_name="files-test")

    def call(self, method, params):
        r = self.peer.call(method, params, timeout=30)
        if "result" in r and method in RESPONSE:
            validate(RESPONSE[method], r["result"])
        return r

    def ok(self, method, params, what):
        r = self.call(method, params)
        check("result" in r, "%s: %s" % (what, r.get("error", {}).get("message", "ok")))
        return r.get("result")

    def refused(self, method, params, what, text, code=-32600):
        r = self.call(method, params)
        err = r.get("error") or {}
        check(err.get("code") == code and text in err.get("message", ""),
              "%s: refused (%s)" % (what, err.get("message", "NOT REFUSED: %s" % r.get("result"))))
        return err

    def read(self, path):
        r = self.call("fs/readFile", {"path": path})
        return base64.b64decode(r["result"]["dataBase64"]) if "result" in r else None

    def stop(self):
        return self.peer.stop()


def b64(data):
    return base64.b64encode(data).decode()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def test_methods(s, work):
    os.makedirs(os.path.join(work, "d/e"))
    write(os.path.join(work, "d/f.txt"), b"hello")
    check(s.read(work + "/d/f.txt") == b"hello", "readFile reads a file in the cwd")
    check(s.read(work + "/d/../d/./f.txt") == b"hello", "readFile folds . and .. inside the root")
    s.refused("fs/readFile", {"path": "d/f.txt"}, "a relative path", "not an absolute path")
    s.refused("fs/readFile", {}, "no path", "missing field `path`")
    s.refused("fs/readFile", {"path": work + "/d"}, "readFile of a directory", "is not a file")
    s.refused("fs/readFile", {"path": work + "/nope"}, "readFile of a missing file",
              "No such file or directory (os error 2)", code=-32603)

    s.ok("fs/writeFile", {"path": work + "/w.txt", "dataBase64": b64(b"\x00\xffxyz")}, "writeFile")
    check(read_bytes(work + "/w.txt") == b"\x00\xffxyz", "writeFile wrote the bytes")
    os.chmod(work + "/w.txt", 0o640)
    s.ok("fs/writeFile", {"path": work + "/w.txt", "dataBase64": b64(b"again")}, "writeFile over")
    check(read_bytes(work + "/w.txt") == b"again" and os.stat(work + "/w.txt").st_mode & 0o777 == 0o640,
          "writeFile replaced the content and kept the permissions")
    s.refused("fs/writeFile", {"path": work + "/w.txt", "dataBase64": "!!!"}, "bad base64",
              "requires valid base64 dataBase64")
    s.refused("fs/writeFile", {"path": work + "/nodir/w.txt", "dataBase64": "eHl6"},
              "writeFile into a missing directory", "No such file or directory", code=-32603)
    s.refused("fs/writeFile", {"path": work + "/d", "dataBase64": "eHl6"}, "writeFile over a directory",
              "Is a directory", code=-32603)
    check(not [n for n in os.listdir(work) if n.endswith(".tmp")], "no temp file stays behind")

    s.ok("fs/createDirectory", {"path": work + "/a/b/c"}, "createDirectory (recursive by default)")
    check(os.path.isdir(work + "/a/b/c"), "the directories exist")
    s.ok("fs/createDirectory", {"path": work + "/a"}, "createDirectory of an existing directory")
    s.refused("fs/createDirectory", {"path": work + "/x/y", "recursive": False},
              "createDirectory without recursive, parent missing", "No such file", code=-32603)
    s.refused("fs/createDirectory", {"path": work + "/d/f.txt"}, "createDirectory over a file",
              "File exists", code=-32603)

    meta = s.ok("fs/getMetadata", {"path": work + "/d/f.txt"}, "getMetadata of a file")
    check(meta and meta["isFile"] and not meta["isDirectory"] and not meta["isSymlink"]
          and abs(meta["modifiedAtMs"] - os.stat(work + "/d/f.txt").st_mtime * 1000) < 1000,
          "getMetadata describes the file: %s" % meta)
    meta = s.ok("fs/getMetadata", {"path": work}, "getMetadata of the root itself")
    check(meta and meta["isDirectory"], "the root is a directory")
    s.refused("fs/getMetadata", {"path": work + "/nope"}, "getMetadata of a missing path",
              "No such file", code=-32603)

    listing = s.ok("fs/readDirectory", {"path": work + "/d"}, "readDirectory")
    check(listing and listing["entries"] == [
        {"fileName": "e", "isDirectory": True, "isFile": False},
        {"fileName": "f.txt", "isDirectory": False, "isFile": True}], "the entries: %s" % listing)
    s.refused("fs/readDirectory", {"path": work + "/d/f.txt"}, "readDirectory of a file",
              "Not a directory (os error 20)", code=-32603)

    s.refused("fs/copy", {"sourcePath": work + "/d", "destinationPath": work + "/d2"},
              "copy of a directory without recursive", "requires recursive: true")
    s.ok("fs/copy", {"sourcePath": work + "/d", "destinationPath": work + "/d2", "recursive": True},
         "recursive copy")
    check(read_bytes(work + "/d2/f.txt") == b"hello" and os.path.isdir(work + "/d2/e"),
          "the tree was copied")
    s.ok("fs/copy", {"sourcePath": work + "/d/f.txt", "destinationPath": work + "/g.txt"}, "file copy")
    check(read_bytes(work + "/g.txt") == b"hello", "the file was copied")
    s.refused("fs/copy", {"sourcePath": work + "/d", "destinationPath": work + "/d/sub",
                          "recursive": True}, "copy into itself", "to itself or one of its descendants")

    s.ok("fs/remove", {"path": work + "/nope"}, "remove of a missing path (force by default)")
    s.refused("fs/remove", {"path": work + "/nope", "force": False}, "remove without force",
              "No such file", code=-32603)
    s.refused("fs/remove", {"path": work + "/d2", "recursive": False}, "non-recursive remove of a tree",
              "Directory not empty", code=-32603)
    s.ok("fs/remove", {"path": work + "/d2"}, "recursive remove")
    check(not os.path.exists(work + "/d2"), "the tree is gone")
    s.refused("fs/remove", {"path": work}, "remove of a root", "keeps the roots")


def test_confinement(s, work, outside):
    secret = os.path.join(outside, "secret.txt")
    write(secret, b"SECRET")
    s.refused("fs/readFile", {"path": work + "/../outside/secret.txt"}, "`..` out of the root",
              "outside the roots")
    s.refused("fs/readFile", {"path": secret}, "an absolute path outside", "outside the roots")
    s.refused("fs/readFile", {"path": "/etc/passwd"}, "/etc/passwd", "outside the roots")
    s.refused("fs/writeFile", {"path": outside + "/new.txt", "dataBase64": "eHl6"},
              "writeFile outside", "outside the roots")
    check(not os.path.exists(outside + "/new.txt"), "nothing was written outside")

    os.symlink(secret, work + "/out-link")
    os.symlink(outside, work + "/out-dir")
    s.refused("fs/readFile", {"path": work + "/out-link"}, "readFile of a symlink pointing out",
              "leads outside the roots")
    s.refused("fs/readFile", {"path": work + "/out-dir/secret.txt"},
              "readFile through a directory symlink pointing out", "leads outside the roots")
    s.refused("fs/readDirectory", {"path": work + "/out-dir"}, "readDirectory of a symlink out",
              "leads outside the roots")
    s.refused("fs/writeFile", {"path": work + "/out-link", "dataBase64": b64(b"PWNED")},
              "writeFile through a symlink pointing out", "leads outside the roots")
    s.refused("fs/writeFile", {"path": work + "/out-dir/new.txt", "dataBase64": b64(b"PWNED")},
              "writeFile through a directory symlink pointing out", "leads outside the roots")
    s.refused("fs/createDirectory", {"path": work + "/out-dir/made"},
              "createDirectory through a symlink out", "leads outside the roots")
    s.refused("fs/copy", {"sourcePath": work + "/out-dir/secret.txt", "destinationPath": work + "/c"},
              "copy from through a symlink out", "leads outside the roots")
    s.refused("fs/copy", {"sourcePath": work + "/w.txt", "destinationPath": work + "/out-dir/c"},
              "copy to through a symlink out", "leads outside the roots")
    s.refused("fs/remove", {"path": work + "/out-dir/secret.txt"},
              "remove through a symlink out", "leads outside the roots")
    check(read_bytes(secret) == b"SECRET" and os.listdir(outside) == ["secret.txt"],
          "the outside is untouched")
    meta = s.ok("fs/getMetadata", {"path": work + "/out-link"}, "getMetadata of a symlink out")
    check(meta and meta["isSymlink"] and not meta["isFile"] and not meta["isDirectory"],
          "a symlink out is described as a link only: %s" % meta)
    listing = s.ok("fs/readDirectory", {"path": work}, "readDirectory with links")
    entries = {e["fileName"]: e for e in (listing or {}).get("entries", [])}
    check(entries.get("out-dir") == {"fileName": "out-dir", "isDirectory": False, "isFile": False},
          "a listed symlink out is neither file nor directory: %s" % entries.get("out-dir"))
    s.ok("fs/remove", {"path": work + "/out-dir"}, "remove of a symlink out removes the link")
    check(not os.path.lexists(work + "/out-dir") and os.path.exists(secret),
          "the link is gone, its target stays")
    s.ok("fs/copy", {"sourcePath": work + "/out-link", "destinationPath": work + "/link-copy"},
         "copy of a symlink copies the link")
    check(os.readlink(work + "/link-copy") == secret, "the copy is a link, nothing was read")

    os.symlink("d/f.txt", work + "/in-link")
    os.symlink(work + "/d/f.txt", work + "/abs-in-link")
    check(s.read(work + "/abs-in-link") == b"hello", "an absolute symlink inside the root is followed")
    check(s.read(work + "/in-link") == b"hello", "a symlink inside the root is followed")
    meta = s.ok("fs/getMetadata", {"path": work + "/in-link"}, "getMetadata of a symlink inside")
    check(meta and meta["isSymlink"] and meta["isFile"], "a symlink inside: link and file")
    s.ok("fs/writeFile", {"path": work + "/in-link", "dataBase64": b64(b"via link")},
         "writeFile through a symlink inside")
    check(read_bytes(work + "/d/f.txt") == b"via link" and os.path.islink(work + "/in-link"),
          "written through to its target, the link stays")

    os.link(secret, work + "/hard")
    s.refused("fs/readFile", {"path": work + "/hard"}, "readFile of a hard link to a file outside",
              "hard links")
    s.refused("fs/copy", {"sourcePath": work + "/hard", "destinationPath": work + "/hard-copy"},
              "copy of a hard link", "hard links")
    s.ok("fs/writeFile", {"path": work + "/hard", "dataBase64": b64(b"mine")},
         "writeFile to a hard-linked name")
    check(read_bytes(secret) == b"SECRET" and read_bytes(work + "/hard") == b"mine",
          "the write replaced the name; the file outside kept its content")

    with open(work + "/huge", "wb") as f:
        f.truncate(17 << 20)
    s.refused("fs/readFile", {"path": work + "/huge"}, "a file over the cap", "reads at most 16777216")
    big = b64(b"x" * ((16 << 20) + 1))
    s.refused("fs/writeFile", {"path": work + "/big", "dataBase64": big}, "a write over the cap",
              "writes at most 16777216")
    os.mkfifo(work + "/fifo")
    s.refused("fs/readFile", {"path": work + "/fifo"}, "a fifo (no hang)", "not a regular file")

    # A directory swapped for a symlink out while it is read: every answer is
    # the inside file or an error, never the secret.
    os.makedirs(work + "/flip")
    write(work + "/flip/secret.txt", b"inside")
    stop = threading.Event()

    def flipper():
        while not stop.is_set():
            os.rename(work + "/flip", work + "/flip-real")
            os.symlink(outside, work + "/flip")
            os.unlink(work + "/flip")
            os.rename(work + "/flip-real", work + "/flip")

    t = threading.Thread(target=flipper)
    t.start()
    seen = {"inside": 0, "error": 0, "secret": 0}
    for _ in range(300):
        got = s.read(work + "/flip/secret.txt")
        seen["error" if got is None else "inside" if got == b"inside" else "secret"] += 1
    stop.set()
    t.join()
    check(seen["secret"] == 0, "a directory swapped for a symlink out never yields the secret: %s" % seen)


def test_roots_from_threads(s, root):
    other = os.path.join(root, "other")
    os.makedirs(other)
    write(other + "/o.txt", b"other")
    s.refused("fs/readFile", {"path": other + "/o.txt"}, "a directory no thread uses", "outside the roots")
    extra = os.path.join(root, "extra")
    os.makedirs(extra)
    s.peer.call("thread/start", {"cwd": other, "sandbox": "workspace-write", "config": {
        "sandbox_workspace_write": {"writable_roots": [extra]}}})
    check(s.read(other + "/o.txt") == b"other", "a thread/start's cwd becomes a root")


def test_home(root):
    """A server whose cwd contains its home: the home stays unreachable."""
    cwd = os.path.join(root, "homecase")
    home = os.path.join(cwd, "inner", "home")
    os.makedirs(cwd)
    s = Server(root, cwd, home, store="local")
    try:
        s.peer.call("thread/start", {})
        files = os.listdir(home)
        check(files != [], "the home has files: %s" % files)
        target = os.path.join(home, sorted(files)[0])
        s.refused("fs/readDirectory", {"path": home}, "readDirectory of the home", "parley's home")
        s.refused("fs/readFile", {"path": target}, "readFile in the home", "parley's home")
        s.refused("fs/writeFile", {"path": home + "/x", "dataBase64": "eHl6"}, "writeFile in the home",
                  "parley's home")
        os.symlink(home, cwd + "/home-link")
        s.refused("fs/readDirectory", {"path": cwd + "/home-link"}, "a symlink to the home",
                  "parley's home")
        s.refused("fs/writeFile", {"path": cwd + "/home-link/x", "dataBase64": "eHl6"},
                  "writeFile through a symlink to the home", "parley's home")
        s.refused("fs/createDirectory", {"path": cwd + "/home-link/sub"},
                  "createDirectory through a symlink to the home", "parley's home")
        check(not os.path.exists(home + "/x") and not os.path.exists(home + "/sub"),
              "nothing was made in the home")
        listing = s.ok("fs/readDirectory", {"path": cwd + "/inner"},
                       "readDirectory of the dir holding the home")
        names = [e["fileName"] for e in (listing or {}).get("entries", [])]
        check("home" not in names, "the home is not listed: %s" % names)
        s.refused("fs/copy", {"sourcePath": cwd + "/inner", "destinationPath": cwd + "/c",
                              "recursive": True}, "copy of a tree holding the home", "parley's home")
        s.refused("fs/remove", {"path": cwd + "/inner"}, "remove of a tree holding the home",
                  "parley's home")
        check(os.path.isdir(home) and not os.path.exists(cwd + "/c"), "the home is still there, uncopied")
        os.makedirs(cwd + "/sub")
        s.refused("fs/remove", {"path": cwd + "/home-link/" + sorted(files)[0]},
                  "remove through a symlink into the home", "parley's home")
        check(os.path.exists(target), "the home's file is still there")
    finally:
        s.stop()


def test_watch(s, work):
    os.makedirs(work + "/wd")
    s.ok("fs/watch", {"path": work + "/wd", "watchId": "w1"}, "watch a directory")
    s.refused("fs/watch", {"path": work + "/wd", "watchId": "w1"}, "the same watchId again",
              "watchId already exists: w1")
    r = s.ok("fs/watch", {"path": work + "/wd/later.txt", "watchId": "w2"}, "watch a missing file")
    check(r == {"path": work + "/wd/later.txt"}, "the watch names its path: %s" % r)
    s.refused("fs/watch", {"path": "/etc", "watchId": "w3"}, "watch outside the roots",
              "outside the roots")
    write(work + "/wd/new.txt", b"1")
    write(work + "/wd/later.txt", b"2")
    got = {}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(got) < 2:
        try:
            m = s.peer.wait(lambda m: m.get("method") == "fs/changed", timeout=deadline - time.monotonic())
        except TimeoutError:
            break
        validate("FsChangedNotification", m["params"])
        got.setdefault(m["params"]["watchId"], set()).update(m["params"]["changedPaths"])
    check(got.get("w1") == {work + "/wd/new.txt", work + "/wd/later.txt"},
          "fs/changed for the directory names both files: %s" % got.get("w1"))
    check(got.get("w2") == {work + "/wd/later.txt"}, "fs/changed for the file: %s" % got.get("w2"))
    s.ok("fs/unwatch", {"watchId": "w1"}, "unwatch")
    s.ok("fs/unwatch", {"watchId": "w1"}, "unwatch again (nothing to do)")
    s.ok("fs/unwatch", {"watchId": "w2"}, "unwatch the file")
    write(work + "/wd/after.txt", b"3")
    try:
        m = s.peer.wait(lambda m: m.get("method") == "fs/changed", timeout=1.0)
        check(False, "no fs/changed after unwatch: %s" % m)
    except TimeoutError:
        check(True, "no fs/changed after unwatch")


def main():
    load_schema()
    root = os.path.realpath(tempfile.mkdtemp(prefix="parley-files-"))
    try:
        work = os.path.join(root, "work")
        outside = os.path.join(root, "outside")
        os.makedirs(work)
        os.makedirs(outside)
        s = Server(root, work, os.path.join(root, "home"))
        try:
            test_methods(s, work)
            test_confinement(s, work, outside)
            test_watch(s, work)
            test_roots_from_threads(s, root)
        finally:
            code = s.stop()
            check(code == 0, "the server exits 0 (%s)" % code)
        test_home(root)
        if VALIDATORS:
            check(validated >= set(RESPONSE.values()) | {"FsChangedNotification"},
                  "every fs/* answer was validated against the schema (%d kinds)" % len(validated))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
