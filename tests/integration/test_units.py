#!/usr/bin/env python3
"""The shipped systemd user units (contrib/systemd) pass `systemd-analyze
verify`, with ExecStart pointing at the built berthd.

usage: BERTHD=build/daemon/berthd test_units.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BERTHD, Checks  # noqa: E402

t = Checks()
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "systemd")
analyze = shutil.which("systemd-analyze")
if not analyze:
    print("skipped: systemd-analyze is not installed")
    t.check(True, "nothing to verify here")
    t.finish()
tmp = tempfile.mkdtemp(prefix="berthd-units-")
try:
    for name in ("berthd@.service", "berthd@.socket"):
        with open(os.path.join(src, name)) as f:
            text = f.read()
        t.check(name.endswith(".socket") or "ExecStart=/usr/bin/berthd --foreground" in text,
                f"{name} starts berthd in the foreground")
        with open(os.path.join(tmp, name.replace("@.", "@test.")), "w") as f:
            f.write(text.replace("/usr/bin/berthd", os.path.abspath(BERTHD)))
    units = [os.path.join(tmp, "berthd@test.socket"), os.path.join(tmp, "berthd@test.service")]
    p = subprocess.run([analyze, "verify", "--man=no", *units], capture_output=True, text=True,
                       env=dict(os.environ, SYSTEMD_UNIT_PATH=tmp + ":"))
    problems = [x for x in (p.stdout + p.stderr).splitlines() if "berthd" in x]
    t.check(p.returncode == 0 and not problems, "systemd-analyze verify accepts the units",
            f"rc {p.returncode}: {p.stdout}{p.stderr}")
    with open(os.path.join(src, "berthd@.service")) as f:
        svc = f.read()
    t.check("Type=notify" in svc and "WatchdogSec=" in svc, "the service is Type=notify with a watchdog")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
t.finish()
