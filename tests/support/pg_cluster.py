#!/usr/bin/env python3
"""A private PostgreSQL 15 cluster for tests: initdb in a temporary directory,
a Unix socket there and a free port on 127.0.0.1, torn down after.

PostgreSQL refuses to run as root, so when the tests run as root the cluster
belongs to an unprivileged user (`nobody`) and its programs run through
`runuser`. A watchdog process stops the cluster when the process that started
it dies (a crashed or killed test run leaves no postmaster behind).

From python:   with pg_cluster.started() as pg: url = pg.create_database("t1")
From C++ (tests/support/pg_cluster.hpp) and the shell, the same as commands:
  pg_cluster.py start DIR [--owner-pid PID]   prints {"url", "port", "socket", "dir"}
  pg_cluster.py createdb DIR NAME             prints the database's URL
  pg_cluster.py psql DIR DB FILE              runs FILE's SQL in DB, prints the rows
  pg_cluster.py restart DIR [--mode immediate|fast]
  pg_cluster.py stop DIR                      stops it and removes DIR

Tests never skip where PostgreSQL is installed; `available()` says whether it
is, and CI (which sets CI=1) fails rather than skips when it is not.
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("PARLEY_PG_BIN", "/usr/lib/postgresql/15/bin")
USER = "parley"  # the cluster's superuser (initdb -U)
RUN_AS = "nobody"  # when we are root


def available():
    return os.path.exists(os.path.join(BIN, "initdb")) and os.path.exists(os.path.join(BIN, "pg_ctl"))


def must_run():
    """True in CI: a test that needs PostgreSQL fails there instead of skipping."""
    return os.environ.get("CI", "") not in ("", "0", "false")


def _as_owner(argv):
    if os.geteuid() == 0:
        return ["runuser", "-u", RUN_AS, "--"] + argv
    return argv


def _chown(path):
    if os.geteuid() == 0:
        import pwd
        pw = pwd.getpwnam(RUN_AS)
        os.chown(path, pw.pw_uid, pw.pw_gid)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _state_path(d):
    return os.path.join(d, "cluster.json")


def _url(port, db):
    return "postgresql://%s@127.0.0.1:%d/%s" % (USER, port, db)


class Cluster:
    def __init__(self, d, port):
        self.dir = d
        self.port = port
        self.socket = os.path.join(d, "sock")
        self.data = os.path.join(d, "data")
        self.log = os.path.join(d, "postgres.log")

    def url(self, db="postgres"):
        return _url(self.port, db)

    def _ctl(self, *args, check=True):
        argv = _as_owner([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-l", self.log] + list(args))
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("pg_ctl %s failed: %s\n%s" % (args[-1], r.stdout, self.log_tail()))
        return r

    def log_tail(self, n=20):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def _options(self):
        return "-k %s -p %d -c listen_addresses=127.0.0.1" % (self.socket, self.port)

    def start(self):
        self._ctl("-o", self._options(), "-w", "-t", "60", "start")

    def stop(self, mode="immediate"):
        self._ctl("-m", mode, "-w", "stop", check=False)

    def restart(self, mode="immediate"):
        self.stop(mode)
        self.start()

    def psql(self, sql, db="postgres"):
        r = subprocess.run([os.path.join(BIN, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-h", self.socket, "-p", str(self.port), "-U", USER, "-d", db, "-c", sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("psql failed: %s" % r.stderr)
        return r.stdout

    def create_database(self, name):
        self.psql('CREATE DATABASE "%s"' % name.replace('"', ""))
        return self.url(name)

    def describe(self):
        return {"url": self.url(), "port": self.port, "socket": self.socket, "dir": self.dir}


def _watch(d, owner_pid):
    """Stops the cluster in `d` once `owner_pid` has gone (a detached process)."""
    while True:
        try:
            os.kill(owner_pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        if not os.path.exists(_state_path(d)):
            return  # stopped by its owner
        time.sleep(1)
    stop(d)


def start(d=None, owner_pid=None):
    """Creates and starts a cluster in `d` (a new temporary directory if None)."""
    d = d or tempfile.mkdtemp(prefix="parley-pg-")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    _chown(d)
    os.makedirs(os.path.join(d, "sock"), exist_ok=True)
    _chown(os.path.join(d, "sock"))
    c = Cluster(d, 0)
    r = subprocess.run(_as_owner([os.path.join(BIN, "initdb"), "-D", c.data, "-A", "trust", "-U", USER,
                                  "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("initdb failed: %s" % r.stdout)
    # A free port can be taken between the probe and the start: try again.
    for attempt in range(5):
        c.port = _free_port()
        try:
            c.start()
            break
        except RuntimeError:
            if attempt == 4:
                raise
    with open(_state_path(d), "w") as f:
        json.dump(c.describe(), f)
    if owner_pid:
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "watch", d, str(owner_pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    return c


def attach(d):
    with open(_state_path(d)) as f:
        s = json.load(f)
    return Cluster(d, s["port"])


def stop(d):
    try:
        c = attach(d)
    except OSError:
        shutil.rmtree(d, ignore_errors=True)
        return
    c.stop()
    shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def started():
    """One cluster for a test run; stopped and removed after (and if this
    process dies, by its watchdog)."""
    c = start(owner_pid=os.getpid())
    try:
        yield c
    finally:
        stop(c.dir)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, d = argv[1], argv[2]
    if cmd == "start":
        owner = int(argv[4]) if len(argv) > 4 and argv[3] == "--owner-pid" else None
        print(json.dumps(start(d, owner).describe()))
    elif cmd == "createdb":
        print(attach(d).create_database(argv[3]))
    elif cmd == "psql":
        with open(argv[4]) as f:
            sys.stdout.write(attach(d).psql(f.read(), argv[3]))
    elif cmd == "restart":
        mode = argv[4] if len(argv) > 4 and argv[3] == "--mode" else "immediate"
        attach(d).restart(mode)
    elif cmd == "stop":
        stop(d)
    elif cmd == "watch":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _watch(d, int(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
