# SPDX-License-Identifier: MIT
"""mache.parallel's interface over berth: ``from berth import parallel``
where Polaris had ``from mache import parallel``.

Same names, argument names, defaults and return types as mache.parallel:
``get_parallel_system(config)``, ``ParallelSystem`` (``cores``,
``cores_per_node``, ``gpus``, ``gpus_per_node``, ``nodes``, ``mpi_allowed``,
``placement_support``, ``get_parallel_command``), ``ResourcePlacement``,
``PlacementSupport``, ``resolve_submission`` and ``SubmissionResolution``.
Nothing is decided here: the system and allocation come from ``berth machine
--allocation``, launch lines from ``berth render`` and scheduler choices from
``berth resolve`` (berth's C renderer and resolver), given the caller's
ConfigParser as a machine file of its own. ``ValueError`` where mache raises
one, with berth's message.

Phase B (the scheduler mache's documents leave for later): ``place(...)``
asks berthd for a placement for one step and returns a ``PlacedStep``
holding the ``ResourcePlacement`` (a context manager that releases it)."""
import configparser
import json
import os
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from enum import Enum
from types import TracebackType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

from ._step import berth_cli
from .client import Lease, acquire

__all__ = ["MemoryCapSupport", "ParallelLaunch", "ParallelSystem", "PlacedStep",
           "PlacementSupport", "ResourcePlacement", "SubmissionResolution",
           "get_parallel_system", "place", "resolve_submission"]

# what a ConfigParser argument may be: mache takes a ConfigParser; any
# RawConfigParser (ConfigParser's base) works the same here
Config = configparser.RawConfigParser


class PlacementSupport(Enum):
    """How this machine's installed launcher can confine a launch (mache's
    values): the scheduler reserves it, the launcher binds cores, or
    nothing can."""
    SCHEDULER = "scheduler"
    CPU_BINDING = "cpu_binding"
    NONE = "none"


class MemoryCapSupport(Enum):
    """Whether a memory cap on a launch is enforced."""
    ENFORCED = "enforced"
    NONE = "none"


def _berth() -> str:
    """The berth CLI: $BERTH, else berth on PATH."""
    exe = berth_cli()
    if not exe:
        raise RuntimeError("berth.parallel needs the berth command: put it on PATH or "
                           "set BERTH to its path")
    return exe


@dataclass(frozen=True)
class ResourcePlacement:
    """Where one launch runs: ``nodes`` (names; empty: the node the launcher
    runs on), ``cores`` one core-id set per node (node-local ids, so two
    nodes may both offer core 0; a single set when ``nodes`` is empty),
    ``gpus`` the launch's GPUs in total, always stated (0: none), and
    ``gpu_ids`` the GPU indices where the machine must name them (PBS with
    PALS): one sequence, the same on every node, or one per node.
    Immutable; checked on construction (``ValueError`` naming the value)."""
    nodes: Sequence[str]
    cores: Sequence[Sequence[int]]
    gpus: int = 0
    gpu_ids: Optional[Sequence[Any]] = None

    def __post_init__(self) -> None:
        if isinstance(self.nodes, str):
            raise ValueError(f"placement nodes must be a sequence of names, not the "
                             f"string {self.nodes!r}")
        nodes = tuple(str(n).strip() for n in self.nodes)
        if any(not n or "," in n or ";" in n for n in nodes):
            raise ValueError(f"placement node names must be non-empty and hold no ',' "
                             f"or ';', got {nodes}")
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"placement nodes must be unique, got {nodes}")
        sets: List[Tuple[int, ...]] = []
        for i, s in enumerate(self.cores):
            if isinstance(s, int) or isinstance(s, str):
                raise ValueError(
                    f"placement cores are one core set per node, e.g. cores=((0, 1), "
                    f"(0, 1)) for two nodes; got {tuple(self.cores)!r}")
            ids = tuple(int(c) for c in s)
            where = f"node {nodes[i]!r}" if i < len(nodes) else f"core set {i}"
            if not ids:
                raise ValueError(f"placement core set of {where} is empty")
            if any(c < 0 for c in ids):
                raise ValueError(f"placement cores of {where} must not be negative, got {ids}")
            if len(set(ids)) != len(ids):
                raise ValueError(f"placement cores of {where} must be unique, got {ids}")
            sets.append(ids)
        want = max(len(nodes), 1)
        if len(sets) != want:
            raise ValueError(f"a placement has one core set per node: {len(nodes)} node(s) "
                             f"{nodes} but {len(sets)} core set(s)")
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) or self.gpus < 0:
            raise ValueError(f"placement gpus is the launch's total, a whole number >= 0, "
                             f"got {self.gpus!r}")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "cores", tuple(sets))
        if self.gpu_ids is None:
            return
        ids_in = list(self.gpu_ids)
        per_node = bool(ids_in) and all(not isinstance(x, int) for x in ids_in)
        lists = ([tuple(int(g) for g in x) for x in ids_in] if per_node
                 else [tuple(int(g) for g in ids_in)])
        for ids in lists:
            if any(g < 0 for g in ids) or len(set(ids)) != len(ids):
                raise ValueError(f"placement gpu_ids must be unique and >= 0 on each node, "
                                 f"got {ids}")
        if per_node and len(lists) != want:
            raise ValueError(f"placement gpu_ids gives {len(lists)} lists for {want} node(s)")
        total = sum(len(x) for x in lists) if per_node else len(lists[0]) * want
        if total != self.gpus:
            raise ValueError(f"placement gpu_ids name {total} GPU(s) over {want} node(s) but "
                             f"gpus is {self.gpus}; they must agree")
        object.__setattr__(self, "gpu_ids", tuple(lists) if per_node else lists[0])

    @property
    def ncores(self) -> int:
        return sum(len(s) for s in self.cores)

    def cli_args(self) -> List[str]:
        """The placement as berth render's options."""
        out: List[str] = []
        if self.nodes:
            out += ["--place-nodes", ",".join(self.nodes)]
        out += ["--place-cores", ";".join(",".join(str(c) for c in s) for s in self.cores)]
        out += ["--place-gpus", str(self.gpus)]
        if self.gpu_ids is not None:
            ids = self.gpu_ids
            if ids and not isinstance(ids[0], int):
                text = ";".join(",".join(str(g) for g in x) for x in ids)
            else:
                text = ",".join(str(g) for g in ids)
            if text:
                out += ["--place-gpu-ids", text]
        return out


@dataclass(frozen=True)
class SubmissionResolution:
    """mache's SubmissionResolution, from ``berth resolve``: the target (''
    when the machine has none on the axis), node counts, how they differ,
    whether the request was honored and why not, and berth's additions: the
    target's wall-clock limit at the effective count and the wall time to
    ask for (the desired one capped at it, or the limit when none)."""
    target: str
    requested_nodes: int
    effective_nodes: int
    adjustment: str
    honored: bool = True
    reason: Optional[str] = None
    max_wallclock: str = ""
    wall_time: str = ""


@dataclass(frozen=True)
class ParallelLaunch:
    """A rendered launch: ``argv`` to run directly, with ``unset`` removed from
    the environment and ``set`` added (berth's environment delta for placed
    Slurm launches: the job's own requests that srun would otherwise read as
    the step's)."""
    argv: List[str]
    unset: List[str]
    set: Dict[str, str]

    def environ(self, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = dict(os.environ if base is None else base)
        for k in self.unset:
            env.pop(k, None)
        env.update(self.set)
        return env


def _config_text(config: Config, overrides: Optional[Mapping[str, Mapping[str, str]]] = None
                 ) -> str:
    """The ConfigParser as a machine file in berth's dialect: values as the
    caller's own interpolation reads them ('$' escaped as '$$'), the raw text
    where that interpolation fails; `overrides` replaces options in the
    named sections."""
    def value(section: str, key: str) -> str:
        try:
            v = config.get(section, key)
            text = str(v).replace("$", "$$") if v is not None else ""
        except (configparser.Error, ValueError):
            text = str(config.get(section, key, raw=True) or "")
        if overrides and key in overrides.get(section, {}):
            text = overrides[section][key]
        return text

    lines: List[str] = []

    def put(section: str, keys: Sequence[str]) -> None:
        lines.append(f"[{section}]")
        extra = [k for k in (overrides or {}).get(section, {}) if k not in keys]
        for k in list(keys) + extra:
            text = value(section, k) if k in keys else (overrides or {})[section][k]
            parts = [p for p in text.split("\n") if p.strip()]
            lines.append(f"{k} = {parts[0] if parts else ''}")
            lines.extend("    " + p.strip() for p in parts[1:])
        lines.append("")

    defaults = config.defaults()
    if defaults:
        put("DEFAULT", list(defaults))
    for section in config.sections():
        own = [k for k in config.options(section)
               if k not in defaults or config.get(section, k, raw=True) != defaults[k]]
        put(section, own)
    for section in (overrides or {}):
        if not config.has_section(section):
            put(section, [])
    return "\n".join(lines) + "\n"


def _run_cli(args: List[str], config_text: str, extra: Sequence[str] = ()
             ) -> "subprocess.CompletedProcess[str]":
    """berth ARGS with the config as a --config file of its own (a machine
    named 'config') and EXTRA files layered over it."""
    with tempfile.TemporaryDirectory(prefix="berth-parallel.") as d:
        path = os.path.join(d, "config.cfg")
        with open(path, "w") as f:
            f.write(config_text)
        files = [path]
        for i, text in enumerate(extra):
            p = os.path.join(d, f"overlay{i}.cfg")
            with open(p, "w") as f:
                f.write(text)
            files.append(p)
        argv = [_berth(), args[0]]
        for p in files:
            argv += ["--config", p]
        env = dict(os.environ)
        for v in ("BERTH_MACHINE",):
            env.pop(v, None)
        return subprocess.run(argv + args[1:], capture_output=True, text=True, env=env)


def _json_answer(p: "subprocess.CompletedProcess[str]", what: str) -> Dict[str, Any]:
    """The JSON a berth command printed, or ValueError with its message."""
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        out = None
    if p.returncode == 0 and isinstance(out, dict) and "error" not in out:
        return out
    msg = None
    if isinstance(out, dict) and isinstance(out.get("error"), dict):
        msg = out["error"].get("message")
    if not msg:
        msg = p.stderr.strip().removeprefix(f"berth {what}: ") or f"exit status {p.returncode}"
    raise ValueError(msg)


_LOGIN = "[parallel]\nsystem = login\n"


class ParallelSystem:
    """The system a step runs on (mache's ParallelSystem): figures of the
    allocation (or the login node), the placement mechanism of the installed
    launcher, and launch lines from berth's renderer."""

    def __init__(self, config: Config, *, nodes: Optional[int] = None,
                 launcher_version: Optional[str] = None,
                 _allocation: Optional[Mapping[str, Any]] = None) -> None:
        self._text = _config_text(config)
        self._launcher = launcher_version
        self._overlay: List[str] = []
        self.cores: Optional[int] = None
        self.cores_per_node: Optional[int] = None
        self.gpus: Optional[int] = None
        self.gpus_per_node: Optional[int] = None
        self.memory: Optional[int] = None
        self.memory_per_node: Optional[int] = None
        self.nodes: Optional[int] = None
        self.mpi_allowed: Optional[bool] = None
        self.system: str = ""
        self.node_names: List[str] = []
        self._support: Optional[Tuple[PlacementSupport, MemoryCapSupport]] = None
        if _allocation is not None:
            self._from_allocation(_allocation)
        else:
            self._as_allocation(nodes or 1)

    def _from_allocation(self, a: Mapping[str, Any]) -> None:
        self.system = str(a["system"])
        t = a["totals"]
        self.nodes = int(t["nodes"])
        self.cores = int(t["cores"])
        self.gpus = int(t["gpus"])
        first = a["nodes"][0] if a.get("nodes") else {}
        self.cores_per_node = int(first.get("ncores", self.cores))
        self.gpus_per_node = int(first.get("gpus", 0))
        self.memory = t.get("memory_credited_mb")
        self.memory_per_node = first.get("memory_credited_mb")
        self.mpi_allowed = bool(a["mpi_allowed"])
        self.node_names = [str(n["name"]) for n in a.get("nodes", [])]
        if self.system == "login":
            self._overlay = [_LOGIN]
        self._support = (PlacementSupport[str(a["placement_support"])],
                         MemoryCapSupport[str(a["memory_cap_support"])])

    def _as_allocation(self, nodes: int) -> None:
        m = _json_answer(_run_cli(["machine", "--json"], self._text), "machine")
        self.system = str(m["system"])
        self.nodes = nodes
        self.cores_per_node = int(m["cores_per_node"])
        self.gpus_per_node = int(m.get("gpus_per_node") or 0)
        self.cores = self.cores_per_node * nodes
        self.gpus = self.gpus_per_node * nodes
        self.memory_per_node = m.get("memory_per_node")
        self.memory = self.memory_per_node * nodes if self.memory_per_node else None
        self.mpi_allowed = self.system != "login"

    def _launcher_support(self) -> Tuple[PlacementSupport, MemoryCapSupport]:
        """What berth render reports of the launcher (detected, or the
        launcher_version given), read once."""
        if self._support is None:
            if self.system == "login":
                self._support = (PlacementSupport.NONE, MemoryCapSupport.NONE)
            else:
                out = _json_answer(self._render(["-n", "1", "--", "true"]), "render")
                self._support = (PlacementSupport[str(out["placement_support"])],
                                 MemoryCapSupport[str(out["memory_cap_support"])])
        return self._support

    @property
    def placement_support(self) -> PlacementSupport:
        """How the installed launcher can confine a launch: read from the
        launcher itself (srun's version, PALS's mpiexec, taskset), never from
        the config."""
        return self._launcher_support()[0]

    @property
    def memory_cap_support(self) -> MemoryCapSupport:
        return self._launcher_support()[1]

    def _render(self, args: List[str]) -> "subprocess.CompletedProcess[str]":
        cli = ["render", "--json", "--nodes", str(self.nodes or 1)]
        if self._launcher:
            cli += ["--launcher-version", self._launcher]
        return _run_cli(cli + args, self._text, self._overlay)

    def get_parallel_launch(self, args: List[str], ntasks: int, cpus_per_task: int = 0,
                            gpus_per_task: int = 0,
                            placement: Optional[ResourcePlacement] = None,
                            memory_cap: Optional[int] = None) -> ParallelLaunch:
        """get_parallel_command's launch with berth's environment delta."""
        if not args:
            raise ValueError("no program given: args must name the program to launch")
        cli = ["--ntasks", str(ntasks)]
        if cpus_per_task:
            cli += ["--cpus-per-task", str(cpus_per_task)]
        if gpus_per_task and placement is None:
            cli += ["--gpus-per-task", str(gpus_per_task)]
        if placement is not None:
            cli += placement.cli_args()
        if memory_cap is not None:
            cli += ["--memory-cap", str(memory_cap)]
        out = _json_answer(self._render(cli + ["--"] + [str(a) for a in args]), "render")
        env = out.get("env") or {}
        return ParallelLaunch([str(a) for a in out["argv"]],
                              [str(v) for v in env.get("unset", [])],
                              {str(k): str(v) for k, v in (env.get("set") or {}).items()})

    def get_parallel_command(self, args: List[str], ntasks: int, cpus_per_task: int = 0,
                             gpus_per_task: int = 0,
                             placement: Optional[ResourcePlacement] = None,
                             memory_cap: Optional[int] = None) -> List[str]:
        """The launch command (argv) berth renders for `args` on `ntasks`
        tasks of `cpus_per_task` cores (0: none said), optionally confined to
        a placement and capped at `memory_cap` MB per node. ValueError for
        what cannot be launched here, with berth's reason."""
        return self.get_parallel_launch(args, ntasks, cpus_per_task, gpus_per_task,
                                        placement, memory_cap).argv

    def get_available_resources(self, placement: Optional[ResourcePlacement] = None
                                ) -> Dict[str, Optional[int]]:
        """What a step may use: the whole system, or exactly a placement's
        subset (its nodes, its cores, its GPUs; memory in proportion)."""
        if placement is None:
            return {"cores": self.cores, "nodes": self.nodes, "gpus": self.gpus,
                    "memory": self.memory}
        mem = None
        if self.memory_per_node and self.cores_per_node:
            mem = min(len(s) * self.memory_per_node // self.cores_per_node
                      for s in placement.cores) * max(len(placement.nodes), 1)
        return {"cores": placement.ncores, "nodes": max(len(placement.nodes), 1),
                "gpus": placement.gpus, "memory": mem}


def get_parallel_system(config: Config, *, nodes: Optional[int] = None,
                        launcher_version: Optional[str] = None) -> ParallelSystem:
    """The system of this process (mache's get_parallel_system): the
    config's [parallel] system inside its job, else the login node (Slurm
    without SLURM_JOB_ID, PBS without PBS_JOBID, or a job that has ended:
    berth asks the scheduler once, warns, and falls back; RuntimeError when
    the scheduler cannot be reached, never a quiet login node).

    berth's additions, for tools and tests: ``nodes=N`` describes an
    allocation of N nodes of this machine without looking for one, and
    ``launcher_version`` (berth render's --launcher-version) stands in for
    the installed launcher."""
    system = config.get("parallel", "system")   # mache's error when missing
    if system not in ("slurm", "pbs", "single_node", "login"):
        raise ValueError(f"Unexpected parallel system: {system}")
    if nodes is not None:
        if nodes <= 0:
            raise ValueError(f"nodes must be positive, got {nodes}")
        return ParallelSystem(config, nodes=nodes, launcher_version=launcher_version)
    p = _run_cli(["machine", "--allocation", "--json"], _config_text(config))
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        out = None
    if p.returncode != 0 or not isinstance(out, dict) or "error" in out:
        msg = (out["error"].get("message") if isinstance(out, dict)
               and isinstance(out.get("error"), dict) else None) or p.stderr.strip()
        raise RuntimeError(msg)
    for w in out.get("warnings") or []:
        warnings.warn(f"berth: {w}", RuntimeWarning, stacklevel=2)
    return ParallelSystem(config, launcher_version=launcher_version, _allocation=out)


_AXES = {"partition": "partitions", "qos": "qos", "queue": "queues"}


def resolve_submission(config: Config, nodes: int, target_type: str,
                       min_nodes_allowed: Optional[int] = None,
                       requested: Optional[str] = None,
                       desired_wall_time: Optional[str] = None) -> SubmissionResolution:
    """One axis (mache's ParallelSystem.resolve_submission): the queue,
    partition or qos for a job of `nodes` nodes, from ``berth resolve`` with
    the machine's other axes set aside. ValueError for bad figures, an
    unknown target_type, or no target that keeps min_nodes_allowed nodes."""
    if target_type not in _AXES:
        raise ValueError(f"Unexpected target_type: {target_type}. Expected one of: "
                         f"{', '.join(_AXES)}.")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes <= 0:
        raise ValueError(f"nodes must be positive, got {nodes}.")
    if min_nodes_allowed is not None and min_nodes_allowed <= 0:
        raise ValueError(f"min_nodes_allowed must be positive, got {min_nodes_allowed}.")
    # Resolve the axis alone: berth resolve on a machine whose other axes
    # are empty (a partition axis answers through Slurm's partition slot,
    # a queue through PBS's), so that nothing else moves the node count.
    blank = {k: "" for a, k in _AXES.items() if a != target_type}
    blank["system"] = "pbs" if target_type == "queue" else "slurm"
    over: Dict[str, Dict[str, str]] = {"parallel": dict(blank)}
    for s in config.sections():
        if s.startswith("parallel."):
            over[s] = {k: v for k, v in blank.items()
                       if k != "system" and config.has_option(s, k)}
    args = ["resolve", "--json", "--nodes", str(nodes)]
    if min_nodes_allowed is not None:
        args += ["--min-nodes-allowed", str(min_nodes_allowed)]
    if requested is not None:
        args += [f"--{target_type}", requested]
    if desired_wall_time is not None:
        args += ["--wall-time", desired_wall_time]
    out = _json_answer(_run_cli(args, _config_text(config, over)), "resolve")
    reason = out.get("reason")
    return SubmissionResolution(
        target=str(out.get(target_type) or ""), requested_nodes=int(out["requested_nodes"]),
        effective_nodes=int(out["effective_nodes"]), adjustment=str(out["adjustment"]),
        honored=bool(out["honored"]), reason=reason if isinstance(reason, str) else None,
        max_wallclock=str(out.get("max_wallclock") or ""),
        wall_time=str(out.get("wall_time") or ""))


class PlacedStep:
    """A step's placement from berthd (phase B): ``placement`` (a
    ResourcePlacement for get_parallel_command), ``lease`` (the berth
    Lease: id, memory cap and budget, the step's environment). A context
    manager; leaving it, or ``release()``, gives the resources back."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        p = lease.placement
        ids: Optional[Sequence[int]] = p.gpu_ids if p.gpu_ids is not None and p.gpus else None
        self.placement = ResourcePlacement(nodes=tuple(p.nodes),
                                           cores=tuple(tuple(c) for c in p.cores),
                                           gpus=p.gpus, gpu_ids=ids)
        self.memory_cap: Optional[int] = lease.memory_cap
        self.memory_mb: Optional[int] = lease.memory_cap or lease.budget_mb

    @property
    def env(self) -> Dict[str, str]:
        """The step's share as environment (BERTH_LEASE, BERTH_CORES, ...)."""
        return dict(self.lease.env)

    def release(self) -> None:
        self.lease.release()

    def __enter__(self) -> "PlacedStep":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.release()


def place(ntasks: Optional[int] = None, cpus_per_task: Optional[int] = None, *,
          cores: Optional[int] = None, min_cores: Optional[int] = None,
          min_tasks: Optional[int] = None, min_cpus_per_task: Optional[int] = None,
          gpus: Optional[int] = None, min_gpus: Optional[int] = None,
          memory: Optional[int] = None, min_memory: Optional[int] = None,
          may_span_nodes: Optional[bool] = None, label: Optional[str] = None,
          timeout: Optional[float] = None, socket: Optional[str] = None) -> PlacedStep:
    """Ask berthd (inside the allocation: $BERTH_SOCKET) for a placement for
    one step's needs: `ntasks` x `cpus_per_task` (an MPI step) or `cores`
    with `min_cores` (a step without ranks), GPUs as totals, memory in MB.
    Waits in berthd's queue until it fits (at most `timeout` s: then
    berth.WaitTimeout); a request no empty allocation could meet is
    berth.Unsatisfiable at once. The lease is held on a connection of its
    own, so a process that dies frees it."""
    if cores is not None and ntasks is not None:
        raise ValueError("a step asks for ntasks (with cpus_per_task) or cores, not both")
    lease = acquire(socket, ntasks=ntasks, cpus_per_task=cpus_per_task, cores=cores,
                    min_cores=min_cores, min_tasks=min_tasks,
                    min_cpus_per_task=min_cpus_per_task, gpus=gpus, min_gpus=min_gpus,
                    memory=memory, min_memory=min_memory, may_span_nodes=may_span_nodes,
                    label=label, timeout=timeout)
    try:
        return PlacedStep(lease)
    except BaseException:
        lease.release()
        raise


