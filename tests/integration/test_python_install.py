#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python client installed the ways Python users install it, each in a
fresh virtual environment, then used against a real berthd from outside the
source tree: a plain `pip install contrib/python` (offline: --no-index; the
package's own build backend needs nothing from an index), and `meson install` with the
environment's python3 first on PATH and the environment as the prefix.
Also: the package passes `mypy --strict`, and mypy rejects a misspelt
acquire field. A step that lacks its tool (venv, wheel, mypy) says so and
is skipped; the test fails only on what ran.

usage: BERTHD=build/daemon/berthd test_python_install.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(TOP, "contrib", "python")
sys.path.insert(0, HERE)
from harness import Checks, Daemon  # noqa: E402

t = Checks()
skipped = []

USE = """
import asyncio, os, sys
import berth, berth.aio
print(os.path.realpath(berth.__file__))
with berth.acquire(sys.argv[1], cores=2, label="installed") as lease:
    print(lease.placement.ncores, lease.label)
async def main():
    async with berth.aio.acquire(sys.argv[1], cores=1, label="installed-aio") as lease:
        print(lease.placement.ncores, lease.label)
asyncio.run(main())
"""


def pythons():
    """Debian's python3 (the README's case) and the one running the tests."""
    out = []
    for p in ("/usr/bin/python3", sys.executable):
        if os.path.exists(p) and os.path.realpath(p) not in [os.path.realpath(x) for x in out]:
            out.append(p)
    return out


def run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(kw.pop("env", {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)


def has(python, *mods):
    return run([python, "-c", "import " + ", ".join(mods)]).returncode == 0


def use_from(venv, d, how):
    py = os.path.join(venv, "bin", "python")
    p = run([py, "-c", USE, d.sock], cwd="/")
    lines = p.stdout.split("\n")
    t.check(p.returncode == 0 and lines[0].startswith(os.path.realpath(venv) + "/")
            and lines[1:3] == ["2 installed", "1 installed-aio"],
            f"{how}: the environment's python imports berth from the environment and "
            "acquires through it (threads and asyncio)", p.stdout + p.stderr[-1500:])
    # every module of the source tree is installed, and imports from there
    mods = sorted(f[:-3] for f in os.listdir(os.path.join(PYDIR, "berth"))
                  if f.endswith(".py") and f != "__init__.py")
    q = run([py, "-c", "import importlib, os, sys\n"
             "for m in sys.argv[1:]:\n"
             "    print(m, os.path.realpath(importlib.import_module('berth.' + m).__file__))",
             *mods], cwd="/")
    got = dict(line.split(" ", 1) for line in q.stdout.split("\n") if " " in line)
    t.check(q.returncode == 0 and sorted(got) == mods
            and all(v.startswith(os.path.realpath(venv) + "/") for v in got.values()),
            f"{how}: every module of contrib/python/berth ({', '.join(mods)}) is installed",
            q.stdout + q.stderr[-1500:])


def test_pip(d, python, tmp):
    """A plain `pip install contrib/python` in a fresh virtual environment,
    with no index: the package's own build backend needs nothing, so pip's
    isolated build installs nothing."""
    if not has(python, "venv", "ensurepip"):
        skipped.append(f"pip install with {python}: no venv/ensurepip (python3-venv)")
        return
    venv = os.path.join(tmp, "pip-venv")
    p = run([python, "-m", "venv", venv])
    t.check(p.returncode == 0, f"python -m venv ({python})", p.stderr)
    if p.returncode:
        return
    # from a copy, so that nothing a build leaves behind lands in the tree
    src = os.path.join(tmp, "python")
    shutil.copytree(PYDIR, src)
    p = run([os.path.join(venv, "bin", "pip"), "install", "--no-index", src], cwd=tmp)
    t.check(p.returncode == 0 and "Successfully installed berth" in p.stdout,
            f"pip install --no-index contrib/python ({python})",
            p.stdout[-1500:] + p.stderr[-1500:])
    if p.returncode == 0:
        use_from(venv, d, f"pip install ({python})")


def test_meson(d, python, tmp):
    if not has(python, "venv", "ensurepip"):
        skipped.append(f"meson install with {python}: no venv/ensurepip (python3-venv)")
        return
    if shutil.which("meson") is None:
        skipped.append("meson install: no meson")
        return
    venv = os.path.join(tmp, "meson-venv")
    p = run([python, "-m", "venv", "--without-pip", venv])
    t.check(p.returncode == 0, f"python -m venv ({python})", p.stderr)
    if p.returncode:
        return
    build = os.path.join(tmp, "build")
    path = {"PATH": os.path.join(venv, "bin") + ":" + os.environ.get("PATH", "")}
    # Configured only: the Python sources need no build.
    p = run(["meson", "setup", "--prefix", venv, build, TOP], env=path)
    t.check(p.returncode == 0, "meson setup with the environment's python3 and prefix",
            p.stdout[-1500:] + p.stderr[-1500:])
    if p.returncode:
        return
    p = run(["meson", "install", "-C", build, "--no-rebuild", "--tags", "python-runtime"],
            env=path)
    t.check(p.returncode == 0, "meson install --tags python-runtime",
            p.stdout[-1500:] + p.stderr[-1500:])
    if p.returncode == 0:
        use_from(venv, d, f"meson install ({python})")


def test_mypy(tmp):
    mypy = next((py for py in pythons() if has(py, "mypy")), None)
    if mypy is None:
        skipped.append("mypy --strict: no mypy (python3-mypy)")
        return
    env = {"MYPYPATH": PYDIR}
    p = run([mypy, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
             "-p", "berth"], env=env, cwd=tmp)
    t.check(p.returncode == 0 and "Success" in p.stdout, "the package passes mypy --strict",
            p.stdout[-3000:] + p.stderr[-1000:])
    example = os.path.join(TOP, "contrib", "examples", "polaris_suite.py")
    p = run([mypy, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
             example], env=env, cwd=tmp)
    t.check(p.returncode == 0, "the Polaris-shaped example passes mypy --strict",
            p.stdout[-3000:] + p.stderr[-1000:])
    bad = os.path.join(tmp, "misspelt.py")
    with open(bad, "w") as f:
        f.write("import berth, berth.aio\n"
                "berth.acquire(corez=4)\n"
                "berth.connect().acquire(cores='4')\n"
                "berth.aio.acquire(memroy=10)\n")
    p = run([mypy, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
             bad], env=env, cwd=tmp)
    t.check(p.returncode == 1 and 'Unexpected keyword argument "corez"' in p.stdout
            and 'Unexpected keyword argument "memroy"' in p.stdout
            and 'Argument "cores" to "acquire" of "Client" has incompatible type "str"'
            in p.stdout,
            "mypy rejects a misspelt field and a wrongly typed one, at the call",
            p.stdout[-3000:])


def main():
    tmp = tempfile.mkdtemp(prefix="berth-pyinstall-")
    d = Daemon(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp},
               machine=None).start()
    try:
        test_mypy(tmp)
        for python in pythons():
            sub = tempfile.mkdtemp(dir=tmp)
            test_pip(d, python, sub)
            test_meson(d, python, sub)
    finally:
        d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    for s in skipped:
        print(f"SKIPPED (loudly): {s}", flush=True)
    if skipped and not t.passed and not t.failed:
        print("SKIP: nothing here to install or check with", flush=True)
        sys.exit(77)
    t.finish()


main()
