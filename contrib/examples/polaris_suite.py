#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Polaris-shaped test suite driven through berthd with the Python client.

Four ocean meshes, each: base mesh (a local Python step) -> cull (launched,
2 ranks) -> initial state (launched, sized from the cell count; the finest
declares its memory) -> four forward runs of different widths (launched,
sized from the cell count) -> analysis (a local Python step with declared
memory); then one comparison of every mesh. 33 steps, started as soon as
their inputs exist, as many at once as berthd finds room for: each step
waits in berthd's queue, not here.

Launched steps run through the launch berthd renders for their placement
(mpiexec on Polaris, srun on Slurm machines). Where the machine's launcher
is not installed (the localhost default without MPI), they run as local
steps instead, one process under the placed CPU affinity, and the driver
says so.

    eval "$(berthd --detach --print-env)"
    PYTHONPATH=contrib/python python3 contrib/examples/polaris_suite.py [--quick]

Prints one line per step and a summary: steps, wall time, mean cores busy.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

try:
    import berth
except ImportError:   # run from a source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "python"))
    import berth

# Cells per mesh, and the per-core figures that size the MPI steps (the
# shape of `berth size`: the target from the goal, the minimum from the most
# one core can hold).
MESHES = {"qu480": 2_000, "qu240": 8_000, "qu120": 30_000, "qu60": 120_000}
GOAL_CELLS_PER_CORE = 4_000
MAX_CELLS_PER_CORE = 60_000
FORWARDS = ["rk4", "split_explicit", "restart", "decomp"]


@dataclass
class Step:
    name: str
    kind: str                       # "local" (Python on berthd's node) or "mpi" (launched)
    seconds: float                  # how long its work takes
    deps: List[str] = field(default_factory=list)
    ntasks: int = 1
    min_tasks: int = 1
    memory: Optional[int] = None    # MB, declared
    # filled in as it runs
    state: str = "waiting"
    cores: int = 0
    started: float = 0.0
    ended: float = 0.0
    lease: str = ""
    error: str = ""


def sized(cells: int) -> "tuple[int, int]":
    return (math.ceil(cells / GOAL_CELLS_PER_CORE), math.ceil(cells / MAX_CELLS_PER_CORE))


def build_suite(scale: float) -> Dict[str, Step]:
    steps: Dict[str, Step] = {}

    def add(s: Step) -> None:
        steps[s.name] = s

    for mesh, cells in MESHES.items():
        n, nmin = sized(cells)
        add(Step(f"{mesh}/base_mesh", "local", 0.2 * scale))
        add(Step(f"{mesh}/cull_mesh", "mpi", 0.2 * scale, [f"{mesh}/base_mesh"], 2, 1))
        add(Step(f"{mesh}/init", "mpi", 0.3 * scale, [f"{mesh}/cull_mesh"], n, nmin,
                 memory=200 if mesh == "qu60" else None))
        for i, fwd in enumerate(FORWARDS):
            # Different widths: the sized count, then halves of it.
            w = max(nmin, n >> i)
            add(Step(f"{mesh}/forward/{fwd}", "mpi", 0.5 * scale, [f"{mesh}/init"], w, nmin))
        add(Step(f"{mesh}/analysis", "local", 0.2 * scale,
                 [f"{mesh}/forward/{f}" for f in FORWARDS], memory=100))
    add(Step("compare_meshes", "local", 0.2 * scale, [f"{m}/analysis" for m in MESHES]))
    return steps


# ---- the steps' own work (this script, run as a step) --------------------

def rank() -> int:
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PALS_RANKID", "SLURM_PROCID"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def step_main(argv: List[str]) -> int:
    """--step NAME WORKDIR SECONDS [INPUT...]: check the inputs, compute for
    SECONDS, write WORKDIR/<NAME>.out (rank 0)."""
    name, work, seconds, inputs = argv[0], argv[1], float(argv[2]), argv[3:]
    total = 0
    for dep in inputs:
        path = os.path.join(work, dep.replace("/", "_") + ".out")
        if not os.path.exists(path):
            print(f"{name}: input {dep} is missing ({path})", file=sys.stderr)
            return 1
        with open(path) as f:
            total += len(f.read())
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:     # busy, so that the cores are used
        x = (x * 31 + 7) % 1_000_003
    if rank() == 0:
        with open(os.path.join(work, name.replace("/", "_") + ".out"), "w") as f:
            f.write(f"{name} cores={os.environ.get('BERTH_CORES', '?')} "
                    f"lease={os.environ.get('BERTH_LEASE', '?')} inputs={total} x={x}\n")
    return 0


# ---- the driver ------------------------------------------------------------

def launcher_unusable(client: berth.Client, socket: Optional[str]) -> Optional[str]:
    """Why launched steps cannot run here (the launcher in berthd's launches
    is not on PATH, or a one-rank probe through it fails), or None."""
    st = client.status()["allocation"]
    nodes = st.get("nodes") or []
    local = st.get("local_node")
    node = nodes[local]["name"] if isinstance(local, int) and 0 <= local < len(nodes) \
        else nodes[0]["name"]
    try:
        launch = client.render(berth.Placement([node], [[0]]), ["PROGRAM"], ntasks=1,
                               cpus_per_task=1)
    except berth.BerthError as e:
        return f"berthd cannot render launches here ({e.message})"
    prefix = launch.argv[:launch.argv.index("PROGRAM")] if "PROGRAM" in launch.argv else []
    known = {"mpirun", "mpiexec", "srun", "aprun", "jsrun", "flux"}
    programs = ([prefix[0]] if prefix else []) + [a for a in prefix if a in known]
    for prog in programs:
        if shutil.which(prog) is None:
            return f"{prog} is not on PATH"
    launcher = next((a for a in prefix if a in known), prefix[0] if prefix else "?")
    try:
        with berth.acquire(socket, ntasks=1, cpus_per_task=1, label="launcher-probe",
                           argv=[sys.executable, "-c", "pass"]) as probe:
            p = probe.run(stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    except (berth.BerthError, OSError, subprocess.TimeoutExpired) as e:
        return f"{launcher} could not run a one-rank probe ({e})"
    if p.returncode:
        last = (p.stderr or "").strip().splitlines()[-1:] or ["no message"]
        return f"{launcher} failed a one-rank probe (exit status {p.returncode}: {last[0]})"
    return None


class Driver:
    def __init__(self, steps: Dict[str, Step], work: str, socket: Optional[str],
                 local_only: bool, verbose: bool) -> None:
        self.steps = steps
        self.work = work
        self.socket = socket
        self.local_only = local_only
        self.verbose = verbose
        self.lock = threading.Condition()
        self.running = 0
        self.peak = 0

    def acquire(self, s: Step) -> berth.Lease:
        """The step's request, on a connection of its own (typed keywords)."""
        prog = [sys.executable, os.path.abspath(__file__), "--step", s.name, self.work,
                str(s.seconds)] + s.deps
        if s.kind == "local":
            return berth.acquire(self.socket, label=s.name, argv=prog, memory=s.memory,
                                 local=True, cores=1)
        if self.local_only:
            # No launcher: the same width as one local process.
            return berth.acquire(self.socket, label=s.name, argv=prog, memory=s.memory,
                                 local=True, cores=s.ntasks, min_cores=s.min_tasks)
        return berth.acquire(self.socket, label=s.name, argv=prog, memory=s.memory,
                             ntasks=s.ntasks, min_tasks=s.min_tasks, cpus_per_task=1)

    def run_step(self, s: Step) -> None:
        try:
            with self.acquire(s) as lease:
                with self.lock:
                    s.state, s.started, s.lease = "running", time.monotonic(), lease.id
                    s.cores = lease.placement.ncores
                    self.running += 1
                    self.peak = max(self.peak, self.running)
                p = lease.run(stdout=None if self.verbose else open(os.devnull, "w"))
                with self.lock:
                    self.running -= 1
                s.ended = time.monotonic()
                if p.returncode:
                    raise RuntimeError(f"exit status {p.returncode}")
                s.state = "ok"
        except (berth.BerthError, OSError, RuntimeError) as e:
            s.state, s.error = "failed", str(e)
            s.ended = s.ended or time.monotonic()
        with self.lock:
            self.lock.notify_all()
        took = s.ended - s.started if s.started else 0.0
        print(f"  {s.state:6} {s.name:28} {s.cores:3} cores  {took:6.2f} s"
              f"  {s.lease}{'  ' + s.error if s.error else ''}", flush=True)

    def run(self) -> float:
        start = time.monotonic()
        threads: List[threading.Thread] = []
        with self.lock:
            while True:
                for s in self.steps.values():
                    if s.state != "waiting":
                        continue
                    deps = [self.steps[d].state for d in s.deps]
                    if any(d in ("failed", "skipped") for d in deps):
                        s.state, s.error = "skipped", "an input step failed"
                        print(f"  skipped {s.name}", flush=True)
                    elif all(d == "ok" for d in deps):
                        s.state = "submitted"
                        th = threading.Thread(target=self.run_step, args=(s,), daemon=True)
                        threads.append(th)
                        th.start()
                if all(s.state in ("ok", "failed", "skipped") for s in self.steps.values()):
                    break
                self.lock.wait(1.0)
        for th in threads:
            th.join()
        return time.monotonic() - start


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--step":
        return step_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="berthd's socket (default: $BERTH_SOCKET)")
    ap.add_argument("--work", help="directory for the steps' outputs (default: a temporary one)")
    ap.add_argument("--quick", action="store_true", help="short steps (tests)")
    ap.add_argument("--verbose", action="store_true", help="show the steps' own output")
    args = ap.parse_args()

    steps = build_suite(0.25 if args.quick else 2.0)
    with berth.connect(args.socket) as client:
        total_cores = client.status()["allocation"]["totals"]["cores"]
        missing = launcher_unusable(client, args.socket)
    if missing:
        print(f"no usable MPI launcher here ({missing}): launched steps run as local "
              "steps, one process each under their placed CPU affinity")
    else:
        print("launched steps run through the launcher berthd renders for their placement")
    work = args.work or tempfile.mkdtemp(prefix="polaris-suite.")
    os.makedirs(work, exist_ok=True)
    print(f"suite: {len(steps)} steps on {total_cores} cores; outputs in {work}")
    driver = Driver(steps, work, args.socket, bool(missing), args.verbose)
    wall = driver.run()

    done = [s for s in steps.values() if s.state == "ok"]
    busy = sum(s.cores * (s.ended - s.started) for s in steps.values() if s.started)
    failed = [s for s in steps.values() if s.state != "ok"]
    print(f"steps {len(steps)} ({len(done)} ok, {len(failed)} failed or skipped) · "
          f"wall time {wall:.2f} s · mean cores busy {busy / wall if wall else 0:.2f} of "
          f"{total_cores} · at most {driver.peak} steps at once")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
