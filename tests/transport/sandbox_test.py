#!/usr/bin/env python3
"""Hostile commands through the real `parley-sandbox` launcher.

Usage: sandbox_test.py PATH/TO/parley-sandbox

Every case runs a real command confined (where it must fail in a specific
way) and under danger-full-access (where the same command must succeed), so
a launcher that confines nothing fails this suite. Exit 77 (skipped) only
when `parley-sandbox --check` says this host cannot enforce the modes.

The work directory is made under the current directory (ctest runs this in
the build tree), never under /tmp, so "outside the writable root" really is
outside: the host's /tmp is not writable in the sandbox either.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

LAUNCHER = os.path.abspath(sys.argv[1])
PY = "/usr/bin/python3"
failures = []
passed = 0


def check(name, condition, detail=""):
    global passed
    if condition:
        passed += 1
        print(f"ok    {name}")
    else:
        failures.append(name)
        print(f"FAIL  {name} {detail}")


def sandbox(mode, command, writable=(), extra=(), cwd=None, timeout=60, stdin=None):
    args = [LAUNCHER, "--mode", mode]
    for w in writable:
        args += ["--writable", w]
    args += list(extra) + ["--", "/bin/sh", "-c", command]
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          input=stdin)


def refused(r):
    """The command ran (the launcher did not fail with 125) and failed."""
    return r.returncode not in (0, 125)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


class Listener:
    """TCP, UDP, Unix-path and abstract Unix listeners that count contacts."""

    def __init__(self, base):
        self.contacts = {"tcp": 0, "udp": 0, "unix": 0, "abstract": 0}
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = os.path.join(base, "listener.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen(16)
        self.abstract_name = f"\0parley-sandbox-test-{os.getpid()}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind(self.abstract_name)
        self.abstract.listen(16)
        for kind, sock in (("tcp", self.tcp), ("unix", self.unix), ("abstract", self.abstract)):
            threading.Thread(target=self._accept, args=(kind, sock), daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _accept(self, kind, sock):
        while True:
            conn, _ = sock.accept()
            self.contacts[kind] += 1
            conn.close()

    def _receive(self):
        while True:
            self.udp.recvfrom(100)
            self.contacts["udp"] += 1

    def client(self, kind):
        port_tcp = self.tcp.getsockname()[1]
        port_udp = self.udp.getsockname()[1]
        code = {
            "tcp": f"s=socket.socket(); s.connect(('127.0.0.1', {port_tcp}))",
            "udp": (f"s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                    f"s.sendto(b'x', ('127.0.0.1', {port_udp}))"),
            "unix": f"s=socket.socket(socket.AF_UNIX); s.connect({self.unix_path!r})",
            "abstract": (f"s=socket.socket(socket.AF_UNIX); "
                         f"s.connect({self.abstract_name!r})"),
        }[kind]
        return f"{PY} -c \"import socket,time; {code}; time.sleep(0.2)\""

    def wait_for(self, kind, count):
        deadline = time.time() + 3
        while self.contacts[kind] < count and time.time() < deadline:
            time.sleep(0.02)
        return self.contacts[kind]


def main():
    probe = subprocess.run([LAUNCHER, "--check"], capture_output=True, text=True)
    try:
        report = json.loads(probe.stdout)
    except ValueError:
        print(f"--check printed no JSON: {probe.stdout!r} {probe.stderr!r}")
        return 1
    print("--check:", probe.stdout.strip())
    if probe.returncode != 0:
        print(f"skipped: this host cannot enforce the sandbox: {report.get('reason')}")
        return 77
    base = tempfile.mkdtemp(prefix="sandbox-test-", dir=os.getcwd())
    try:
        run_cases(base, report)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", base], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    print(f"{passed} passed, {len(failures)} failed")
    for name in failures:
        print("failed:", name)
    return 1 if failures else 0


def fresh_root(base, name):
    """A writable root and an outside directory, both empty."""
    root = os.path.join(base, name, "w")
    outside = os.path.join(base, name, "outside")
    os.makedirs(root)
    os.makedirs(outside)
    return root, outside


def run_cases(base, report):
    filesystem_cases(base)
    protected_cases(base)
    read_only_cases(base)
    hide_cases(base)
    network_cases(base)
    escape_cases(base)
    isolate_cases(base)
    limit_cases(base, report)
    status_cases(base)


def filesystem_cases(base):
    host = subprocess.Popen(["sleep", "60"])  # a host process: /proc/<pid>/root
    try:
        cases = [
            ("absolute path", lambda w, o: f"echo x > {o}/f", "f"),
            ("dot-dot", lambda w, o: "echo x > ../outside/f", "f"),
            ("symlink out", lambda w, o: f"ln -s {o} link && echo x > link/f", "f"),
            ("/proc/self/root", lambda w, o: f"echo x > /proc/self/root{o}/f", "f"),
            # (under danger-full-access /proc/1 is the host's init, which
            # this host may not let us enter; the shell's own /proc/$$ is.)
            ("/proc/1/root", lambda w, o, d=False: f"echo x > /proc/{'$$' if d else 1}/root{o}/f",
             "f"),
            ("/proc/<host pid>/root", lambda w, o: f"echo x > /proc/{host.pid}/root{o}/f", "f"),
            ("hardlink to outside", lambda w, o: f"ln {o}/target hard && echo x >> hard",
             "target"),
            ("rename out", lambda w, o: f"mv mine {o}/f", "f"),
            ("host /tmp", lambda w, o: f"echo x > /tmp/parley-sandbox-test-{os.getpid()}", None),
        ]
        for index, (name, command, witness) in enumerate(cases):
            for mode in ("workspace-write", "danger-full-access"):
                root, outside = fresh_root(base, f"fs{index}-{mode}")
                with open(os.path.join(outside, "target"), "w") as f:
                    f.write("orig\n")
                with open(os.path.join(root, "mine"), "w") as f:
                    f.write("mine\n")
                danger = mode == "danger-full-access"
                text = (command(root, outside, True) if danger and name == "/proc/1/root"
                        else command(root, outside))
                r = sandbox(mode, text, [] if danger else [root], cwd=root)
                if witness is None:
                    path = f"/tmp/parley-sandbox-test-{os.getpid()}"
                    wrote = os.path.exists(path)
                    if wrote:
                        os.unlink(path)
                elif witness == "target":
                    wrote = read(os.path.join(outside, "target")) != "orig\n"
                else:
                    wrote = os.path.exists(os.path.join(outside, witness))
                if mode == "danger-full-access":
                    check(f"{name}: writes under danger-full-access", r.returncode == 0 and wrote,
                          r.stderr)
                else:
                    check(f"{name}: refused under workspace-write", refused(r) and not wrote,
                          f"rc={r.returncode} wrote={wrote} {r.stderr}")
        # The writable root itself does work, also through its own symlinks.
        root, _ = fresh_root(base, "fs-ok")
        r = sandbox("workspace-write", "mkdir -p a/b && echo x > a/b/f && ln -s a/b l && "
                    "echo y > l/g && cat a/b/g", [root], cwd=root)
        check("writes inside the writable root", r.returncode == 0 and r.stdout == "y\n",
              r.stderr)
    finally:
        host.kill()
        host.wait()


def protected_cases(base):
    for mode in ("workspace-write", "danger-full-access"):
        root, _ = fresh_root(base, f"prot-{mode}")
        os.makedirs(os.path.join(root, ".git", "hooks"))
        with open(os.path.join(root, ".git", "HEAD"), "w") as f:
            f.write("ref: refs/heads/main\n")
        writable = [root] if mode == "workspace-write" else []
        attempts = {
            ".git existing: write inside": "echo x > .git/HEAD",
            ".git existing: add a hook": "echo x > .git/hooks/pre-commit",
            ".git existing: rename away": "mv .git gone",
            ".git existing: remove": "rm -rf .git",
        }
        for name, command in attempts.items():
            r = sandbox(mode, command, writable, cwd=root)
            if mode == "workspace-write":
                check(f"{name}: refused", refused(r), r.stderr)
            else:
                check(f"{name}: allowed under danger-full-access", r.returncode == 0, r.stderr)
        if mode == "workspace-write":
            check(".git untouched", read(os.path.join(root, ".git", "HEAD"))
                  == "ref: refs/heads/main\n" and not os.path.exists(
                      os.path.join(root, ".git", "hooks", "pre-commit")))
            # A name that is not there is not pinned (as Codex): `git init`
            # of a nested repository and a new .codex work.
            r = sandbox(mode, "mkdir .codex && echo x > .codex/config.toml && mkdir sub && "
                        "cd sub && mkdir .git && echo ok", writable, cwd=root)
            check("missing names can be created (as Codex)", r.returncode == 0, r.stderr)
    # A worktree's .git is a file; it stays read-only too.
    root, _ = fresh_root(base, "prot-file")
    with open(os.path.join(root, ".git"), "w") as f:
        f.write("gitdir: /elsewhere\n")
    r = sandbox("workspace-write", "echo 'gitdir: /tmp/evil' > .git", [root], cwd=root)
    check(".git file: refused", refused(r)
          and read(os.path.join(root, ".git")) == "gitdir: /elsewhere\n", r.stderr)
    # A protected name that is a symlink cannot be pinned: fail closed.
    root, outside = fresh_root(base, "prot-link")
    os.symlink(outside, os.path.join(root, ".codex"))
    r = sandbox("workspace-write", f"touch {root}/ran", [root], cwd=root)
    check(".codex symlink: fails closed (125, one line, not run)",
          r.returncode == 125 and r.stderr.count("\n") == 1
          and r.stderr.startswith("parley-sandbox: ")
          and not os.path.exists(os.path.join(root, "ran")), r.stderr)


def read_only_cases(base):
    for mode in ("read-only", "danger-full-access"):
        root, _ = fresh_root(base, f"ro-{mode}")
        r = sandbox(mode, "echo x > f", cwd=root)
        wrote = os.path.exists(os.path.join(root, "f"))
        if mode == "read-only":
            check("read-only: write in cwd refused", refused(r) and not wrote, r.stderr)
        else:
            check("read-only counterpart: write under danger-full-access", wrote, r.stderr)
    root, _ = fresh_root(base, "ro-dev")
    r = sandbox("read-only", "echo x > /dev/null && head -c 4 /dev/zero | wc -c && "
                "head -c 4 /dev/urandom | wc -c", cwd=root)
    check("read-only: /dev/null, /dev/zero, /dev/urandom work",
          r.returncode == 0 and r.stdout.split() == ["4", "4"], r.stderr)
    r = sandbox("read-only", "ls /dev", cwd=root)
    check("read-only: /dev holds no block device (no /dev/vda, /dev/sda)",
          r.returncode == 0 and "null" in r.stdout and "sda" not in r.stdout
          and "vda" not in r.stdout, r.stdout)
    r = sandbox("read-only", "cat", cwd=root, stdin="through stdin\n")
    check("stdin and stdout are inherited", r.stdout == "through stdin\n", r.stderr)


def hide_cases(base):
    home = os.path.join(base, "home")
    secret_dir = os.path.join(home, ".parley")
    os.makedirs(secret_dir)
    with open(os.path.join(secret_dir, "secret.txt"), "w") as f:
        f.write("TOPSECRET\n")
    audit = os.path.join(home, "audit.log")
    with open(audit, "w") as f:
        f.write("AUDITLINE\n")
    root, _ = fresh_root(base, "hide")
    os.symlink(secret_dir, os.path.join(root, "link-dir"))
    os.symlink(audit, os.path.join(root, "link-file"))
    inner = os.path.join(root, "inner-secret")
    os.makedirs(inner)
    with open(os.path.join(inner, "key"), "w") as f:
        f.write("TOPSECRET\n")
    hide = ["--hide", secret_dir, "--hide", audit, "--hide", inner]
    reads = {
        "hidden dir: read": f"cat {secret_dir}/secret.txt",
        "hidden dir: list": f"ls -A {secret_dir} | grep secret",
        "hidden dir: via symlink": "cat link-dir/secret.txt",
        "hidden dir: via ..": f"cat {secret_dir}/../.parley/secret.txt",
        "hidden dir: via /proc/self/root": f"cat /proc/self/root{secret_dir}/secret.txt",
        "hidden file: read": f"cat {audit}",
        "hidden file: via symlink": "cat link-file",
        "hidden file: via /proc/1/root": f"cat /proc/1/root{audit}",
        "hidden file: via /proc/$$/root": f"cat /proc/$$/root{audit}",
        "hidden dir inside the writable root": "cat inner-secret/key",
        "hidden dir inside the root: write": "echo x > inner-secret/new && ls inner-secret/new",
    }
    for name, command in reads.items():
        r = sandbox("workspace-write", command, [root], extra=hide, cwd=root)
        check(f"{name}: refused", refused(r) and "SECRET" not in r.stdout
              and "AUDIT" not in r.stdout and "secret" not in r.stdout, r.stdout + r.stderr)
        if name.endswith(": write"):
            check(f"{name}: host copy untouched", not os.path.exists(os.path.join(inner, "new")))
        if "/proc/1/" in command:  # the host's init: see filesystem_cases
            command = command.replace("/proc/1/", "/proc/$$/")
        r = sandbox("danger-full-access", command, cwd=root)
        check(f"{name}: readable under danger-full-access", r.returncode == 0, r.stderr)


def network_cases(base):
    root, _ = fresh_root(base, "net")
    listener = Listener(os.path.join(base, "net"))
    for kind in ("tcp", "udp", "unix", "abstract"):
        before = listener.contacts[kind]
        r = sandbox("workspace-write", listener.client(kind), [root], cwd=root)
        time.sleep(0.1)
        check(f"network off: {kind} refused",
              refused(r) and listener.contacts[kind] == before, r.stderr[-200:])
        r = sandbox("workspace-write", listener.client(kind), [root], extra=["--network", "on"],
                    cwd=root)
        check(f"network on: {kind} reaches the listener",
              r.returncode == 0 and listener.wait_for(kind, before + 1) == before + 1,
              r.stderr[-200:])
        r = sandbox("danger-full-access", listener.client(kind), cwd=root)
        check(f"danger-full-access: {kind} reaches the listener",
              r.returncode == 0 and listener.wait_for(kind, before + 2) == before + 2,
              r.stderr[-200:])
    r = sandbox("read-only", f"{PY} -c \"import socket; a, b = socket.socketpair(); "
                "a.send(b'pair'); print(b.recv(4).decode())\"", cwd=root)
    check("network off: socketpair still works", r.stdout == "pair\n", r.stderr)


def escape_cases(base):
    """Ways to undo the confinement from inside."""
    root, outside = fresh_root(base, "undo")
    attempts = {
        "remount / read-write": f"mount -o remount,rw / && echo x > {outside}/f",
        "new user namespace, then remount": (
            f"unshare -U -r -m sh -c 'mount -o remount,rw,bind / && echo x > {outside}/f'"),
        "new user namespace, then unmount the hide": (
            f"unshare -U -r -m sh -c 'umount -l {outside} && echo x > {outside}/f'"),
        "new user namespace, then a fresh proc": (
            "unshare -U -r -m -p -f sh -c 'mount -t proc proc /proc && ls /proc/1/root'"),
        "write /proc/sys": "echo 1 > /proc/sys/kernel/sysrq",
        "setuid bit": f"cp /bin/true t && chmod u+s t && ls -l t && echo x > {outside}/f",
    }
    for name, command in attempts.items():
        r = sandbox("workspace-write", command, [root], extra=["--hide", outside], cwd=root)
        check(f"undo: {name}: refused", refused(r)
              and not os.path.exists(os.path.join(outside, "f")), r.stdout + r.stderr)
    r = sandbox("workspace-write", "grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; "
                "grep NoNewPrivs /proc/self/status", [root], cwd=root)
    values = [line.split()[1] for line in r.stdout.splitlines()]
    check("no capability and no_new_privs",
          values == ["0000000000000000"] * 4 + ["1"], r.stdout)


def isolate_cases(base):
    root, outside = fresh_root(base, "isolate")
    shown = os.path.join(base, "isolate", "shown")
    os.makedirs(shown)
    for d in (outside, shown):
        with open(os.path.join(d, "data"), "w") as f:
            f.write("DATA\n")
    extra = ["--isolate-reads", "--readable", shown]
    for name, command, confined_ok in (
            ("outside dir unreadable", f"cat {outside}/data", False),
            ("outside dir not even listed",
             f"ls -A {os.path.dirname(outside)} | grep -qx outside", False),
            ("readable dir readable", f"cat {shown}/data", True),
            ("readable dir not writable", f"echo x > {shown}/new", False),
            ("writable root writable", "echo x > f && cat f", True),
            ("system paths visible", "ls /usr/bin/env /etc/passwd", True)):
        r = sandbox("workspace-write", command, [root], extra=extra, cwd=root)
        check(f"isolate-reads: {name}", (r.returncode == 0) if confined_ok else refused(r),
              r.stdout + r.stderr)
        r = sandbox("danger-full-access", command, cwd=root)
        if not confined_ok:
            check(f"isolate-reads counterpart: {name}: works under danger-full-access",
                  r.returncode == 0, r.stderr)


def limit_cases(base, report):
    root, _ = fresh_root(base, "limits")
    if not report.get("processes"):
        # No pids cgroup here (and root, where RLIMIT_NPROC does not bind):
        # the launcher refuses a cap it cannot apply, parley drops it.
        print("skipped: the process cap cases (--check: processes false)")
        r = sandbox("workspace-write", "true", [root], extra=["--max-processes", "10"], cwd=root)
        check("a process cap this host cannot apply is refused (125)", r.returncode == 125,
              r.stderr)
    else:
        # Processes: 30 sleepers against a cap of 10, in every mode.
        spawn = "for i in $(seq 30); do sleep 2 & done; wait"
        for mode, writable in (("workspace-write", [root]), ("danger-full-access", [])):
            r = sandbox(mode, spawn, writable, extra=["--max-processes", "10"], cwd=root)
            check(f"{mode}: --max-processes 10 stops the 11th process",
                  r.returncode != 125 and "fork" in r.stderr, r.stderr[-200:])
        r = sandbox("danger-full-access", spawn, cwd=root)
        check("danger-full-access without a cap: 30 processes run",
              r.returncode == 0 and r.stderr == "", r.stderr[-200:])
        # A real fork bomb: bounded while it runs, gone once the group is killed.
        bomb = subprocess.Popen([LAUNCHER, "--mode", "workspace-write", "--writable", root,
                                 "--max-processes", "40", "--", "/bin/bash", "-c",
                                 "b() { b | b & }; b; sleep 60"], cwd=root, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        cgroup = f"/sys/fs/cgroup/pids/parley-sandbox-{bomb.pid}"
        current = read(os.path.join(cgroup, "pids.current"))
        if current is not None:
            check("fork bomb: bounded by --max-processes 40 (+1 for the init)",
                  int(current) <= 41, current)
        else:
            check("fork bomb: still running, bounded", bomb.poll() is None)
        os.killpg(bomb.pid, signal.SIGKILL)
        bomb.wait()
        deadline = time.time() + 5
        left = read(os.path.join(cgroup, "pids.current"))
        while left not in (None, "0\n") and time.time() < deadline:
            time.sleep(0.05)
            left = read(os.path.join(cgroup, "pids.current"))
        check("fork bomb: nothing left after SIGKILL to the process group", left in (None, "0\n"),
              str(left))
        if os.path.isdir(cgroup):
            os.rmdir(cgroup)
    # Memory: a 512 MiB allocation against --max-memory 256 MiB.
    hog = f"{PY} -c \"x = bytearray(512 * 1024 * 1024); print('allocated')\""
    r = sandbox("workspace-write", hog, [root], extra=["--max-memory", str(256 << 20)], cwd=root)
    check("memory hog: stopped by --max-memory", refused(r)
          and "allocated" not in r.stdout and "MemoryError" in r.stderr, r.stderr[-200:])
    r = sandbox("danger-full-access", hog, cwd=root)
    check("memory hog: allocates without the limit", r.stdout == "allocated\n", r.stderr[-200:])
    # CPU: 3 s of spinning against --max-cpu 1.
    spin = (f"{PY} -c \"import time\nt = time.process_time()\n"
            "while time.process_time() - t < 3: pass\nprint('spun')\"")
    # (Not timed: on a loaded host 1 s of CPU can take longer than 3 s of
    # wall; the status and the missing "spun" prove the cap ended it.)
    r = sandbox("workspace-write", spin, [root], extra=["--max-cpu", "1"], cwd=root)
    check("cpu spin: ended by --max-cpu (SIGXCPU: 128+24)",
          r.returncode == 128 + signal.SIGXCPU and "spun" not in r.stdout, f"rc={r.returncode}")
    r = sandbox("danger-full-access", spin, cwd=root)
    check("cpu spin: finishes without the limit", r.stdout == "spun\n", r.stderr[-200:])
    r = sandbox("workspace-write", "head -c 10000 /dev/zero > big", [root],
                extra=["--max-file-size", "4096"], cwd=root)
    check("--max-file-size: a larger file is cut off",
          refused(r) and os.path.getsize(os.path.join(root, "big")) == 4096,
          f"rc={r.returncode}")


def status_cases(base):
    root, _ = fresh_root(base, "status")
    for mode, writable in (("workspace-write", [root]), ("read-only", []),
                           ("danger-full-access", [])):
        r = sandbox(mode, "exit 7", writable, cwd=root)
        check(f"{mode}: the command's exit status", r.returncode == 7, r.stderr)
        r = sandbox(mode, "kill -TERM $$", writable, cwd=root)
        if mode == "danger-full-access":  # the launcher exec'd the command itself
            check(f"{mode}: a signal death is the caller's own", r.returncode == -15, r.stderr)
        else:
            check(f"{mode}: a signal death is 128+signal", r.returncode == 128 + 15, r.stderr)
    r = subprocess.run([LAUNCHER, "--mode", "read-only", "--", "/no/such/program"],
                       capture_output=True, text=True, cwd=root)
    check("a missing program exits 127", r.returncode == 127, r.stderr)
    r = subprocess.run([LAUNCHER, "--mode", "bogus", "--", "true"], capture_output=True,
                       text=True, cwd=root)
    check("a bad command line exits 125 with one line",
          r.returncode == 125 and r.stderr.startswith("parley-sandbox: "), r.stderr)


if __name__ == "__main__":
    sys.exit(main())
