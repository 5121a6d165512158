#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shipped systemd user units (contrib/systemd) pass `systemd-analyze
verify` (as system and as user units), with ExecStart pointing at the built
berthd; they are Type=notify with a watchdog, restart on failure, keep a
state directory where berthd looks for its journal, and carry hardening
options a user unit may use. A deliberately broken copy is flagged, so the
verification can fail.

usage: BERTHD=build/daemon/berthd test_units.py
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BERTHD, Checks  # noqa: E402

t = Checks()
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "systemd")


def read(name):
    with open(os.path.join(src, name)) as f:
        return f.read()


def settings(text):
    """{key: [values]} of a unit file (comments dropped)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[" or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out.setdefault(k.strip(), []).append(v.strip())
    return out


svc, sock = settings(read("berthd@.service")), settings(read("berthd@.socket"))
exec_start = svc.get("ExecStart", [""])[0]
t.check(exec_start.startswith("/usr/bin/berthd --foreground"), "the service starts berthd in the foreground",
        exec_start)
t.check(svc.get("Type") == ["notify"] and svc.get("NotifyAccess") == ["main"], "the service is Type=notify")
t.check(re.fullmatch(r"\d+", svc.get("WatchdogSec", [""])[0] or "x") is not None, "it has a watchdog")
t.check(svc.get("Restart") == ["on-failure"], "it restarts on failure")
t.check(set(svc.get("RestartPreventExitStatus", [""])[0].split()) == {"2", "3", "4"},
        "but not after a usage error or when the allocation is over (exit 2, 3, 4)")
t.check(svc.get("ExecReload", [""])[0].endswith("kill -HUP $MAINPID"), "reload sends SIGHUP (reopen the logs)")
state = svc.get("RuntimeDirectory", [""])[0]
t.check(state == "berth/%i.state" and f"--state-dir %t/{state}" in exec_start
        and svc.get("RuntimeDirectoryMode") == ["0700"] and svc.get("RuntimeDirectoryPreserve") == ["yes"],
        "the state directory is systemd's, mode 0700, kept across restarts, and the one berthd is given",
        f"{state} / {exec_start}")
t.check(sock.get("ListenStream") == ["%t/berth/%i.sock"] and sock.get("SocketMode") == ["0600"]
        and sock.get("DirectoryMode") == ["0700"], "the socket is per job, 0600, in a 0700 directory")
t.check(os.path.dirname(sock["ListenStream"][0]) == os.path.dirname("%t/" + state),
        "the state directory sits beside the socket (berthd's own default)")
for key in ("NoNewPrivileges", "LockPersonality", "RestrictRealtime", "RestrictSUIDSGID",
            "RestrictNamespaces", "MemoryDenyWriteExecute"):
    t.check(svc.get(key) == ["yes"], f"hardening: {key}=yes")
t.check(svc.get("SystemCallFilter") == ["@system-service"] and svc.get("UMask") == ["0077"],
        "hardening: a system call filter and umask 0077")
for key in ("PrivateTmp", "ProtectSystem", "ProtectHome", "PrivateUsers", "RestrictAddressFamilies"):
    t.check(key not in svc, f"no {key} (needs privileges in a user unit, or would cut off the scheduler)")

analyze = shutil.which("systemd-analyze")
if not analyze:
    print("skipped: systemd-analyze is not installed")
    t.finish()


def verify(tmp, service_text, user):
    with open(os.path.join(tmp, "berthd@test.service"), "w") as f:
        f.write(service_text.replace("/usr/bin/berthd", os.path.abspath(BERTHD)))
    with open(os.path.join(tmp, "berthd@test.socket"), "w") as f:
        f.write(read("berthd@.socket"))
    units = [os.path.join(tmp, "berthd@test.socket"), os.path.join(tmp, "berthd@test.service")]
    cmd = [analyze] + (["--user"] if user else []) + ["verify", "--man=no", *units]
    env = dict(os.environ, SYSTEMD_UNIT_PATH=tmp + ":", XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", tmp))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    problems = [x for x in (p.stdout + p.stderr).splitlines() if "berthd" in x]
    return p.returncode, problems, p.stdout + p.stderr


tmp = tempfile.mkdtemp(prefix="berthd-units-")
try:
    for user in (False, True):
        rc, problems, out = verify(tmp, read("berthd@.service"), user)
        t.check(rc == 0 and not problems, f"systemd-analyze {'--user ' if user else ''}verify accepts the units",
                f"rc {rc}: {out}")
    broken = read("berthd@.service").replace("Restart=on-failure", "Restart=sometimes\nBogusKey=1")
    rc, problems, out = verify(tmp, broken, True)
    t.check(rc != 0 or any("BogusKey" in x for x in problems), "and flags a broken copy", out)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
t.finish()
