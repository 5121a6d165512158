#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berth.parallel (mache.parallel's interface) against the berth CLI.

For every machine of ../shared/site-machines/ that berth also ships, and for
every shipped machine, read as Polaris reads it (a ConfigParser of the
site's default.cfg and machine file, with the overrides layered in and the
compiler in [build]), over the grid of cli-site_machines (site_machines.py's
own shapes, launcher versions, compilers, node counts, targets and wall
times): get_parallel_command gives exactly `berth render`'s argv (and the
same refusal, as ValueError, where berth render refuses), placement_support
is berth render's, and resolve_submission gives `berth resolve`'s answer for
that axis. Also: the login fallback, a job that has ended (one squeue, a
warning, login), a scheduler that cannot be reached (RuntimeError), the
"one core set per node" probe and ResourcePlacement's checks.

Exit 0 when all agree, 1 otherwise, 77 (said loudly) without the site files.
"""
import configparser
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import site_machines as sm  # noqa: E402  (the same grid, by construction)

sys.path.insert(0, os.path.join(sm.SRC, "contrib", "python"))
from berth import parallel  # noqa: E402

BERTH = os.environ["BERTH"]
failures = []
checked = {"render": 0, "resolve": 0}


def check(ok, what):
    if not ok:
        failures.append(what)
        if len(failures) <= 20:
            print("FAIL:", what)


def clean_env():
    env = dict(os.environ)
    for v in ("BERTH_MACHINE", "BERTH_MACHINE_PATH", "BERTH_MACHINES_DIR", "SLURM_JOB_ID",
              "PBS_JOBID"):
        env.pop(v, None)
    return env


def cli(args):
    p = subprocess.run([BERTH] + args, capture_output=True, text=True, env=clean_env())
    return p


def read_config(files, compiler):
    c = configparser.ConfigParser(interpolation=configparser.ExtendedInterpolation())
    c.read(files)
    if compiler:
        if not c.has_section("build"):
            c.add_section("build")
        c.set("build", "compiler", compiler)
    return c


def shape_call(shape):
    """A site_machines shape (berth render options) as interface arguments."""
    o = {"nodes": 1, "ntasks": 1, "cpus_per_task": 0, "gpus_per_task": 0}
    pn, pc, pg, pids = None, None, 0, None
    it = iter(shape)
    for a in it:
        v = next(it)
        if a == "--nodes":
            o["nodes"] = int(v)
        elif a == "-n":
            o["ntasks"] = int(v)
        elif a == "-c":
            o["cpus_per_task"] = int(v)
        elif a == "--gpus-per-task":
            o["gpus_per_task"] = int(v)
        elif a == "--place-nodes":
            pn = tuple(v.split(","))
        elif a == "--place-cores":
            pc = tuple(tuple(ids(s)) for s in v.split(";"))
        elif a == "--place-gpus":
            pg = int(v)
        elif a == "--place-gpu-ids":
            pids = tuple(int(x) for x in v.split(","))
        else:
            raise SystemExit(f"parallel_interface.py: unknown shape option {a}")
    placement = None
    if pc is not None:
        placement = parallel.ResourcePlacement(nodes=pn or (), cores=pc, gpus=pg, gpu_ids=pids)
    return o, placement


def ids(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def compare_renders(label, config, ref_args, view, compiler):
    systems = {}
    for lv in sm.launcher_versions(view["system"]):
        for shape in sm.shapes(view):
            o, placement = shape_call(shape)
            key = (o["nodes"], lv)
            if key not in systems:
                systems[key] = parallel.get_parallel_system(config, nodes=o["nodes"],
                                                            launcher_version=lv)
            system = systems[key]
            args = ["render"] + ref_args + ["--json"] + shape
            if compiler:
                args += ["--compiler", compiler]
            if lv:
                args += ["--launcher-version", lv]
            ref = cli(args + ["--", "./exe"])
            try:
                rj = json.loads(ref.stdout)
            except ValueError:
                rj = None
            try:
                got = system.get_parallel_command(["./exe"], o["ntasks"], o["cpus_per_task"],
                                                  o["gpus_per_task"], placement=placement)
                err = None
            except ValueError as e:
                got, err = None, str(e)
            checked["render"] += 1
            what = f"{label} {' '.join(shape)} launcher {lv}"
            if ref.returncode == 0:
                check(err is None and got == rj["argv"],
                      f"{what}: berth render {rj['argv']}, interface {got or err}")
                check(system.placement_support.name == rj["placement_support"],
                      f"{what}: placement_support {system.placement_support} vs "
                      f"{rj['placement_support']}")
            else:
                msg = (rj or {}).get("error", {}).get("message") if isinstance(rj, dict) else None
                # the machine's name: the interface's file is called config.cfg
                same = err is not None and msg is not None and \
                    re.sub(r"^machine \S+, ", "", err) == re.sub(r"^machine \S+, ", "", msg)
                check(got is None and same,
                      f"{what}: berth render refused ({msg}), interface {got or err}")


def axis_overlay(path, axis, compiler, view):
    """An overlay leaving only AXIS of the machine (the reference for one axis)."""
    others = [k for a, k in parallel._AXES.items() if a != axis]
    sections = ["parallel"] + ([f"parallel.{compiler.replace('-', '_')}"] if compiler else [])
    with open(path, "w") as f:
        for s in sections:
            f.write(f"[{s}]\n")
            if s == "parallel":
                f.write(f"system = {'pbs' if axis == 'queue' else 'slurm'}\n")
            f.write("".join(f"{k} =\n" for k in others))
    return path


def compare_resolves(label, config, ref_args, view, compiler, tmp):
    counts = sm.limits(view)
    walls = [w for w in sm.walls(view)]
    for axis, key in parallel._AXES.items():
        names = [t["name"] for t in view["targets"][axis]]
        if not names and axis != "queue":
            continue
        over = axis_overlay(os.path.join(tmp, f"axis-{axis}.cfg"), axis, compiler, view)
        for n in counts:
            for target in [None] + names + ["nosuch"]:
                for wall in walls:
                    args = ["resolve"] + ref_args + ["--config", over, "--json", "--nodes", str(n)]
                    if compiler:
                        args += ["--compiler", compiler]
                    if target:
                        args += [f"--{axis}", target]
                    if wall:
                        args += ["--wall-time", wall]
                    ref = cli(args)
                    try:
                        got = parallel.resolve_submission(config, n, axis, requested=target,
                                                          desired_wall_time=wall)
                        err = None
                    except ValueError as e:
                        got, err = None, str(e)
                    checked["resolve"] += 1
                    what = f"{label} {axis} nodes {n} target {target} wall {wall}"
                    if ref.returncode != 0:
                        check(got is None and err, f"{what}: berth resolve refused "
                              f"({ref.stderr.strip()}), interface {got}")
                        continue
                    r = json.loads(ref.stdout)
                    want = parallel.SubmissionResolution(
                        target=r.get(axis) or "", requested_nodes=r["requested_nodes"],
                        effective_nodes=r["effective_nodes"], adjustment=r["adjustment"],
                        honored=r["honored"], reason=r["reason"],
                        max_wallclock=r["max_wallclock"], wall_time=r["wall_time"])
                    check(got == want, f"{what}: berth resolve {want}, interface {got or err}")
        # a machine with this axis alone: the whole job's answer, unchanged
        others = [a for a in parallel._AXES if a != axis and view["targets"][a]]
        if names and not others and view["system"] == ("pbs" if axis == "queue" else "slurm"):
            for n in counts:
                ref = json.loads(cli(["resolve"] + ref_args + ["--json", "--nodes", str(n)]
                                     + (["--compiler", compiler] if compiler else [])).stdout)
                got = parallel.resolve_submission(config, n, axis)
                check((got.target, got.effective_nodes, got.max_wallclock) ==
                      (ref[axis], ref["effective_nodes"], ref["max_wallclock"]),
                      f"{label} {axis} nodes {n}: whole-job resolve {ref}, interface {got}")


def grid(tmp):
    site = sm.SITE
    shipped_dir = os.path.join(sm.SRC, "machines")
    both = sorted(os.path.splitext(f)[0] for f in os.listdir(site) if f.endswith(".cfg")
                  and os.path.exists(os.path.join(shipped_dir, f)) and f != "default.cfg")
    sm.TMP = tmp
    for machine in both:
        ours = os.path.join(shipped_dir, machine + ".cfg")
        theirs = os.path.join(site, machine + ".cfg")
        default = (sm.build_compiler(ours) or "").replace("-", "_")
        compilers = [""] + [c for c in sm.sections(theirs) if c != default]
        for compiler in compilers:
            given = compiler or default
            shipped = sm.machine_view(machine, given, False)
            overlay = sm.write_overlay(machine, given, shipped)
            # the site's file, as Polaris reads it, with the overrides in
            config = read_config([os.path.join(site, "default.cfg"), theirs, overlay], given)
            ref = ["--machine-path", site, "--machine", machine, "--config", overlay]
            compare_renders(f"site {machine} {given}", config, ref, shipped, given)
            compare_resolves(f"site {machine} {given}", config, ref, shipped, given, tmp)
    # every shipped machine, read from machines/
    for f in sorted(os.listdir(shipped_dir)):
        machine = os.path.splitext(f)[0]
        if not f.endswith(".cfg") or machine in ("default",):
            continue
        path = os.path.join(shipped_dir, f)
        default = (sm.build_compiler(path) or "").replace("-", "_")
        for compiler in [""] + [c for c in sm.sections(path) if c != default]:
            given = compiler or default
            view = sm.machine_view(machine, given, False)
            config = read_config([os.path.join(shipped_dir, "default.cfg"), path], given)
            ref = ["--machine", machine]
            compare_renders(f"shipped {machine} {given}", config, ref, view, given)
            if machine in both:
                continue   # its resolves were compared above through the site's file
            compare_resolves(f"shipped {machine} {given}", config, ref, view, given, tmp)


def login_and_stale(tmp):
    cfg = read_config([os.path.join(sm.SRC, "machines", "pm-cpu.cfg")], "")
    saved = dict(os.environ)
    try:
        for v in ("SLURM_JOB_ID", "PBS_JOBID"):
            os.environ.pop(v, None)
        s = parallel.get_parallel_system(cfg)
        check(s.system == "login" and s.mpi_allowed is False and s.nodes == 1,
              f"login fallback: no SLURM_JOB_ID gives the login system ({s.system})")
        check(s.placement_support is parallel.PlacementSupport.NONE,
              "login fallback: placement NONE")
        try:
            s.get_parallel_command(["./exe"], 2)
            check(False, "login: a parallel launch is refused")
        except ValueError as e:
            check("login node" in str(e), f"login refusal names the login node: {e}")
        # a job that has ended: one squeue, which says so; a warning, then login
        calls = os.path.join(tmp, "squeue.calls")
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir, exist_ok=True)
        with open(os.path.join(bindir, "squeue"), "w") as f:
            f.write(f"#!/bin/sh\necho \"$*\" >> {calls}\necho COMPLETED\n")
        os.chmod(os.path.join(bindir, "squeue"), 0o755)
        os.environ["PATH"] = bindir + ":" + saved.get("PATH", "")
        os.environ["SLURM_JOB_ID"] = "4242"
        for v in ("SLURMD_NODENAME", "SLURM_JOB_NODELIST", "SLURM_NODELIST"):
            os.environ.pop(v, None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = parallel.get_parallel_system(cfg)
        with open(calls) as f:
            n = len(f.read().splitlines())
        check(s.system == "login", f"ended job: falls back to login ({s.system})")
        check(n == 1, f"ended job: exactly one squeue ({n})")
        check(any("4242" in str(x.message) and "COMPLETED" in str(x.message) for x in w),
              f"ended job: a warning naming the job and its state ({[str(x.message) for x in w]})")
        # no scheduler at all: loud
        with open(os.path.join(bindir, "squeue"), "w") as f:
            f.write("#!/bin/sh\necho 'squeue: error: Unable to contact slurm controller' >&2\n"
                    "exit 1\n")
        try:
            parallel.get_parallel_system(cfg)
            check(False, "unreachable scheduler: RuntimeError")
        except RuntimeError as e:
            check("4242" in str(e), f"unreachable scheduler: the error names the job: {e}")
    finally:
        os.environ.clear()
        os.environ.update(saved)


def probe():
    # Polaris's setup: does ResourcePlacement take one core set per node?
    try:
        p = parallel.ResourcePlacement(nodes=("a", "b"), cores=((0,), (0,)), gpus=0)
        ok = True
    except (TypeError, ValueError):
        ok = False
    check(ok, "the probe: two nodes both offering core 0 are accepted")
    # ... and the renderer keeps that promise on every launcher that places
    for machine, lv, want in (("pm-cpu", "slurm:23.02", ["-w", "a,b", "--exact"]),
                              ("chrysalis", "slurm:20.02", ["--cpu-bind=mask_cpu:0x1"]),
                              ("polaris", "pals", ["--hosts", "a,b", "--cpu-bind", "list:0:0"])):
        cfg = read_config([os.path.join(sm.SRC, "machines", machine + ".cfg")], "")
        s = parallel.get_parallel_system(cfg, nodes=2, launcher_version=lv)
        argv = s.get_parallel_command(["./exe"], 2, placement=p)
        text = " ".join(argv)
        check(all(" ".join(want) in text or w in argv for w in want),
              f"probe placement on {machine} ({lv}): {argv}")
    # different sets on two nodes where a mask list restarts per node: refused
    cfg = read_config([os.path.join(sm.SRC, "machines", "chrysalis.cfg")], "")
    s = parallel.get_parallel_system(cfg, nodes=2, launcher_version="slurm:20.02")
    try:
        s.get_parallel_command(["./exe"], 2, placement=parallel.ResourcePlacement(
            nodes=("a", "b"), cores=((0,), (1,))))
        check(False, "different core sets per node on Slurm 20.02: refused")
    except ValueError:
        pass
    s = parallel.get_parallel_system(cfg, nodes=2, launcher_version="none")
    check(s.placement_support is parallel.PlacementSupport.NONE, "no srun: placement NONE")
    # ResourcePlacement's checks
    for bad in (dict(nodes=("a", "a"), cores=((0,), (0,))),
                dict(nodes=("a",), cores=((0, 0),)),
                dict(nodes=("a",), cores=((-1,),)),
                dict(nodes=("a", "b"), cores=((0,),)),
                dict(nodes=("a",), cores=(0, 1)),
                dict(nodes=("a",), cores=((0,),), gpus=-1),
                dict(nodes=("a",), cores=((0,),), gpus=2, gpu_ids=(0,))):
        try:
            parallel.ResourcePlacement(**bad)
            check(False, f"ResourcePlacement({bad}) is refused")
        except ValueError:
            pass
    p = parallel.ResourcePlacement(nodes=["a"], cores=[[1, 2]])
    try:
        p.gpus = 3  # type: ignore[misc]
        check(False, "ResourcePlacement is immutable")
    except AttributeError:
        pass
    check(p.cores == ((1, 2),) and p.nodes == ("a",), "ResourcePlacement keeps tuples")
    for bad_call in (lambda: parallel.resolve_submission(cfg, 0, "partition"),
                     lambda: parallel.resolve_submission(cfg, 4, "bogus"),
                     lambda: parallel.resolve_submission(cfg, 4, "partition",
                                                         min_nodes_allowed=0)):
        try:
            bad_call()
            check(False, "resolve_submission: ValueError for a bad argument")
        except ValueError:
            pass


def main():
    if not os.path.isdir(sm.SITE):
        print(f"SKIP: no site machine files at {sm.SITE}: berth.parallel was NOT compared "
              "over the sites' files", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="berth-parallel-test.") as tmp:
        probe()
        login_and_stale(tmp)
        grid(tmp)
    print(f"berth.parallel against the CLI: {checked['render']} launches, "
          f"{checked['resolve']} resolutions; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
