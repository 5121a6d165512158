#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The machines berth ships against the sites' own machine files.

../shared/site-machines/ holds the machine files E3SM's users already have
(mache's machines/*.cfg, unchanged). For every machine both have, berth must
read the same facts from its own file as from the site's: every [parallel]
option, every queue, partition and QOS with its node range, wall-clock limit
and bins, the account defaults, and the host names the site's [discovery]
hostname_re patterns claim; and the same launches (`berth render`
over a grid of shapes, placed and unplaced, for every compiler section) and
the same scheduler choices (`berth resolve` at and around every limit) come
out of both. The site's file is read through the machine search path
(--machine-path and BERTH_MACHINE_PATH), as a user with the site's files
would.

A difference is allowed only when DELIBERATE lists it with its reason; a
listed difference that no longer shows up is an error too, so the list stays
true. A new fact in a site file shows up here as a failing test.

Exit 0 when all agree, 1 on a difference, 77 (skip, said loudly) when the
site files are not there.
"""
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BERTH = os.environ["BERTH"]
SRC = os.environ.get("BERTH_SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SITE = os.environ.get("BERTH_SITE_MACHINES",
                      os.path.join(SRC, "..", "shared", "site-machines"))

# (machine, compiler or "*", what) -> reason. `what` is "parallel:KEY" for an
# effective [parallel] option, "targets" for the target lists, "defaults" for
# the account defaults, "render" or "resolve" for the commands' answers.
DELIBERATE = {
    ("*", "*", "parallel:memory_per_node"):
        "the sites' files at this commit do not state memory per node; berth "
        "needs it to place memory and ships a measured or low estimated figure",
    ("aurora", "*", "parallel:gpu_visible_devices_var"):
        "newer than the sites' files at this commit (their README): PALS "
        "launches hide other GPUs through ZE_AFFINITY_MASK",
    ("polaris", "*", "parallel:gpu_visible_devices_var"):
        "newer than the sites' files at this commit (their README): PALS "
        "launches hide other GPUs through CUDA_VISIBLE_DEVICES",
    ("polaris", "*", "parallel:cpu_bind"):
        "PALS's mpiexec spells the policy --cpu-bind core; the site's 'cores' "
        "is Slurm's spelling, which PALS refuses",
}
# Host names a site's [discovery] hostname_re matches that berth's
# [discovery] hostnames deliberately do not, with the reason.
DISCOVERY = {
    ("aurora", "x1111c1s1b0n0"):
        "the site's ^x\\d{4}c\\d{1}s\\d{1}b0n0 also matches Polaris's compute "
        "nodes (x3...); berth claims x4... for Aurora and x3... for Polaris",
}
# Compiler sections berth ships that the site's file lacks, with the reason.
EXTRA_SECTIONS = {
    ("frontier", "crayamd_mphipcc"): "E3SM builds Frontier's GPU code with it too",
    ("frontier", "craygnu_hipcc"): "E3SM builds Frontier's GPU code with it too",
    ("frontier", "craycray_hipcc"): "E3SM builds Frontier's GPU code with it too",
    ("pm-gpu", "nvidia"): "a CPU-only build on the GPU nodes, like gnu",
    ("polaris", "nvidia"): "a CPU-only build, like gnu",
}

used = set()
used_discovery = set()
found = []      # every difference: (machine, compiler, what, detail, reason or None)


def deliberate(machine, compiler, what):
    for key in ((machine, compiler, what), (machine, "*", what), ("*", compiler, what),
                ("*", "*", what)):
        if key in DELIBERATE:
            used.add(key)
            return DELIBERATE[key]
    return None


def note(machine, compiler, what, detail):
    found.append((machine, compiler, what, detail, deliberate(machine, compiler, what)))


def run(args, site, env_path=False, overlay=None):
    """berth ARGS with the shipped files, or the site's through the search path
    (--machine-path, or BERTH_MACHINE_PATH when env_path), with the overlay
    file (--config) when given."""
    env = dict(os.environ)
    for v in ("BERTH_MACHINE", "BERTH_MACHINE_PATH", "BERTH_MACHINES_DIR", "SLURM_JOB_ID",
              "PBS_JOBID"):
        env.pop(v, None)
    argv = [BERTH] + args
    if site and env_path:
        env["BERTH_MACHINE_PATH"] = SITE
    elif site:
        argv = [BERTH, args[0], "--machine-path", SITE] + args[1:]
    if overlay:
        argv[2:2] = ["--config", overlay]
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def sections(path):
    with open(path) as f:
        return [m.group(1) for m in re.finditer(r"^\[parallel\.([^\]]+)\]", f.read(), re.M)]


def build_compiler(path):
    with open(path) as f:
        m = re.search(r"^\[build\][^\[]*?^compiler\s*[=:]\s*(\S+)", f.read(), re.M | re.S)
    return m.group(1) if m else None


def discovery_samples(path):
    """A host name for each of the site file's hostname_re patterns: the
    pattern's literal text with each digit class filled in (None for a
    pattern this cannot spell)."""
    with open(path) as f:
        m = re.search(r"^hostname_re\s*[=:]\s*(.+)$", f.read(), re.M)
    out = []
    for pat in (re.split(r",(?![^{]*\})", m.group(1)) if m else []):
        pat = pat.strip().lstrip("^")
        host = re.sub(r"\\d\{(\d+)(,\d+)?\}", lambda d: "1" * int(d.group(1)), pat)
        host = host.replace("\\d", "1")
        out.append((pat, host if re.fullmatch(r"[A-Za-z0-9._-]+", host) else None))
    return out


def shipped_globs(path):
    with open(path) as f:
        m = re.search(r"^\[discovery\][^\[]*?^hostnames\s*[=:]\s*(.+?)$", f.read(), re.M | re.S)
    return [g.strip() for g in m.group(1).split(",")] if m else []


def compare_discovery(machine, ours, theirs):
    globs = shipped_globs(ours)
    for pat, host in discovery_samples(theirs):
        if host is None:
            note(machine, "", "discovery", f"cannot spell a host name for the site's {pat!r}")
            continue
        if not any(fnmatch.fnmatchcase(host, g) for g in globs):
            key = (machine, host)
            if key in DISCOVERY:
                used_discovery.add(key)
                found.append((machine, "", "discovery",
                              f"site's {pat!r} matches {host}, shipped {globs} do not",
                              DISCOVERY[key]))
            else:
                note(machine, "", "discovery",
                     f"site's {pat!r} matches {host}, shipped {globs} do not")


def norm_parallel(p):
    out = {k: v.strip() for k, v in p.items() if v.strip()}
    out.setdefault("gpus_per_node", "0")
    return out


def machine_view(machine, compiler, site):
    args = ["machine", "--machine", machine, "--json"]
    if compiler:
        args += ["--compiler", compiler]
    rc, out, err = run(args, site, env_path=site)
    if rc != 0:
        raise SystemExit(f"FAIL: berth machine {machine} {compiler} "
                         f"({'site' if site else 'shipped'}): {err.strip()}")
    return json.loads(out)


def compare_facts(machine, compiler, shipped, site):
    if site["file"] != os.path.join(SITE, machine + ".cfg"):
        note(machine, compiler, "file", f"the site's view read {site['file']}")
    if shipped["file"] != f"machines/{machine}.cfg":
        note(machine, compiler, "file", f"the shipped view read {shipped['file']}")
    a, b = norm_parallel(shipped["parallel"]), norm_parallel(site["parallel"])
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            note(machine, compiler, "parallel:" + key,
                 f"shipped {a.get(key)!r}, site {b.get(key)!r}")
    for axis in ("partition", "qos", "queue"):
        ta = {t["name"]: t for t in shipped["targets"][axis]}
        tb = {t["name"]: t for t in site["targets"][axis]}
        if list(ta) != list(tb):
            note(machine, compiler, "targets", f"{axis} list: shipped {list(ta)}, site {list(tb)}")
        for name in ta.keys() & tb.keys():
            if ta[name] != tb[name]:
                note(machine, compiler, "targets",
                     f"{axis} {name}: shipped {ta[name]}, site {tb[name]}")
    if shipped["account_defaults"] != site["account_defaults"]:
        note(machine, compiler, "defaults",
             f"shipped {shipped['account_defaults']}, site {site['account_defaults']}")


def shapes(view):
    """A grid of launches for one machine and compiler: unplaced on 1 and 2
    nodes, placed on one and two nodes, with and without cores per task and
    GPUs, up to the node's width."""
    cores = view["cores_per_node"] or 8
    gpus = view["gpus_per_node"] or 0
    mpi = int(view["parallel"].get("max_mpi_tasks_per_node") or cores)
    out = []
    for nodes in (1, 2):
        for n in sorted({1, 4, mpi, mpi * nodes}):
            for c in (None, 1, 2):
                args = ["--nodes", str(nodes), "-n", str(n)]
                if c:
                    args += ["-c", str(c)]
                out.append(args)
                if gpus:
                    out.append(args + ["--gpus-per-task", "1"])
    width = min(4, cores)
    for nodes in (1, 2):
        names = ",".join(f"node{i}" for i in range(nodes))
        cs = ";".join([f"0-{width - 1}"] * nodes)
        base = ["--nodes", str(nodes), "--place-nodes", names, "--place-cores", cs,
                "-n", str(nodes * 2)]
        out.append(base)
        out.append(base + ["-c", "2"])
        if gpus:
            out.append(base + ["--place-gpus", str(nodes), "--place-gpu-ids", "0"])
    return out


def launcher_versions(system):
    return {"slurm": ["slurm:23.02", "slurm:20.02"], "pbs": ["pals", "none"]}.get(system, [None])


def brief(text):
    """One line for a command's answer: compact JSON, or the text's lines."""
    try:
        return json.dumps(json.loads(text), separators=(",", ":"))
    except ValueError:
        return " / ".join(text.strip().split("\n"))


def json_diff(a, b):
    ka = a if isinstance(a, dict) else {}
    kb = b if isinstance(b, dict) else {}
    return {k: (ka.get(k), kb.get(k)) for k in sorted(set(ka) | set(kb)) if ka.get(k) != kb.get(k)}


def answer(args, site, overlay):
    rc, out, err = run(args, site, overlay=overlay if site else None)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, out, err


def differs(args, overlay):
    """None when the shipped and the site's file give the same answer, else
    a line saying how they differ."""
    a, b = answer(args, False, overlay), answer(args, True, overlay)
    if a[0] == b[0] and (a[0] != 0 or a[1] == b[1]):
        return None
    if a[0] == 0 and b[0] == 0 and isinstance(a[1], dict):
        return f"{' '.join(args[1:])}: shipped/site differ in {json_diff(a[1], b[1])}"
    return (f"{' '.join(args[1:])}: shipped rc={a[0]} {brief(str(a[1])) or a[2].strip()}; "
            f"site rc={b[0]} {brief(str(b[1])) or b[2].strip()}")


def write_overlay(machine, compiler, shipped):
    """The deliberate [parallel] differences as a --config file over the
    site's machine, so that the commands compare everything else."""
    keys = {w.split(":", 1)[1] for (m, c, w) in DELIBERATE
            if w.startswith("parallel:") and m in ("*", machine) and c in ("*", compiler)}
    lines = [f"{k} = {shipped['parallel'][k]}" for k in sorted(keys) if k in shipped["parallel"]]
    path = os.path.join(TMP, f"{machine}-{compiler or 'none'}.cfg")
    with open(path, "w") as f:
        f.write("# the deliberate differences, as berth ships them\n")
        for section in ("parallel",) + ((f"parallel.{compiler.replace('-', '_')}",) if compiler else ()):
            f.write(f"[{section}]\n" + "".join(l + "\n" for l in lines))
    return path


def compare_renders(machine, compiler, view, overlay):
    differ = []
    for lv in launcher_versions(view["system"]):
        for shape in shapes(view):
            args = ["render", "--machine", machine, "--json"] + shape
            if compiler:
                args += ["--compiler", compiler]
            if lv:
                args += ["--launcher-version", lv]
            args += ["--", "./exe"]
            d = differs(args, overlay)
            if d:
                differ.append(d)
    if differ:
        note(machine, compiler, "render", f"{len(differ)} launches differ, first: {differ[0]}")
    return sum(len(shapes(view)) for _ in launcher_versions(view["system"]))


def limits(view):
    """Node counts at and around every limit the two views state."""
    counts = {1, 2, 10000}
    for axis in view["targets"].values():
        for t in axis:
            for n in [t["min_nodes"], t["max_nodes"]] + [b["nodes"] for b in t["max_wallclock_bins"]]:
                if n:
                    counts |= {n - 1, n, n + 1}
    return sorted(c for c in counts if c >= 1)


def walls(view):
    out = {None}
    for axis in view["targets"].values():
        for t in axis:
            clocks = [t["max_wallclock"]] + [b["max_wallclock"] for b in t["max_wallclock_bins"]]
            for w in clocks:
                if w:
                    h, m, s = (int(x) for x in w.split(":"))
                    secs = h * 3600 + m * 60 + s
                    for d in (secs - 1, secs, secs + 1):
                        out.add(f"{d // 3600:02d}:{d // 60 % 60:02d}:{d % 60:02d}")
    return sorted(out, key=lambda w: w or "")


def compare_resolves(machine, compiler, shipped, site, overlay):
    targets = [None]
    for view in (shipped, site):
        for axis in view["targets"].values():
            targets += [t["name"] for t in axis]
    targets = list(dict.fromkeys(targets))
    counts = sorted(set(limits(shipped)) | set(limits(site)))
    wall_times = sorted(set(walls(shipped)) | set(walls(site)), key=lambda w: w or "")
    differ = []
    cases = 0
    for n in counts:
        for target in targets:
            for wall in wall_times:
                # the job-script header for the plain request, every field
                # of the answer for all
                for out in ("--json", "--script") if wall is None else ("--json",):
                    args = ["resolve", "--machine", machine, "--nodes", str(n), out]
                    if compiler:
                        args += ["--compiler", compiler]
                    if target:
                        args += ["--scheduler-target", target]
                    if wall:
                        args += ["--wall-time", wall]
                    cases += 1
                    d = differs(args, overlay)
                    if d:
                        differ.append(d)
    if differ:
        note(machine, compiler, "resolve", f"{len(differ)} of {cases} answers differ, first: {differ[0]}")
    return cases


def main():
    if not os.path.isdir(SITE):
        print(f"SKIP: no site machine files at {SITE} (../shared/site-machines is "
              "not there); the shipped machines were NOT compared with the sites'",
              file=sys.stderr)
        return 77
    shipped_dir = os.path.join(SRC, "machines")
    both = sorted(os.path.splitext(f)[0] for f in os.listdir(SITE) if f.endswith(".cfg")
                  and os.path.exists(os.path.join(shipped_dir, f)) and f != "default.cfg")
    renders = resolves = 0
    global TMP
    TMP = tempfile.mkdtemp(prefix="berth-site-machines.")
    for machine in both:
        ours = os.path.join(shipped_dir, machine + ".cfg")
        theirs = os.path.join(SITE, machine + ".cfg")
        for extra in set(sections(ours)) - set(sections(theirs)):
            if (machine, extra) not in EXTRA_SECTIONS:
                note(machine, extra, "section", "shipped has [parallel.%s], the site's file does not" % extra)
        for missing in set(sections(theirs)) - set(sections(ours)):
            note(machine, missing, "section", "the site's file has [parallel.%s], shipped does not" % missing)
        # No compiler: berth's default ([build] compiler), given to both so
        # that the site's file gets the same overlay; then every section the
        # site's file has.
        compare_discovery(machine, ours, theirs)
        default = (build_compiler(ours) or "").replace("-", "_")
        compilers = [""] + [c for c in sections(theirs) if c != default]
        for compiler in compilers:
            given = compiler or default
            shipped = machine_view(machine, given, False)
            site = machine_view(machine, given, True)
            compare_facts(machine, compiler, shipped, site)
            overlay = write_overlay(machine, given, shipped)
            renders += compare_renders(machine, given, shipped, overlay)
            resolves += compare_resolves(machine, given, shipped, site, overlay)
    shutil.rmtree(TMP, ignore_errors=True)
    bad = [f for f in found if f[4] is None]
    print(f"compared {len(both)} machines ({', '.join(both)}): {renders} launches, "
          f"{resolves} scheduler answers")
    for m, c, what, detail, reason in found:
        tag = "deliberate" if reason else "DIFFERENCE"
        print(f"{tag}: {m}{' --compiler ' + c if c else ''}: {what}: {detail}"
              + (f"\n    reason: {reason}" if reason else ""))
    stale = [k for k in DELIBERATE if k not in used]
    stale += [k for k in DISCOVERY if k not in used_discovery]
    for k in stale:
        print(f"STALE: listed difference {k} no longer shows up; remove it from DELIBERATE")
    for (m, s), reason in EXTRA_SECTIONS.items():
        print(f"deliberate: {m}: [parallel.{s}] shipped only: {reason}")
    print(f"{len(bad)} differences not listed as deliberate, {len(stale)} stale entries")
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
