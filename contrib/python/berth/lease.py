# SPDX-License-Identifier: MIT
"""What a lease is, whichever client got it: its id, placement, launch and
environment, and how its step is started (the rendered launch, or a local
step's program under the placed CPU affinity). client.Lease and
aio.AsyncLease add releasing it over their connection."""
import os
import shutil
import subprocess
import time
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from . import _step
from ._wire import Launch, Placement
from .errors import BerthError, PlacementUnusable, ProtocolError


def _idset(text: str) -> Set[int]:
    out: Set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def core_threads(cores: Sequence[int], sysfs: str = "/sys") -> Set[int]:
    """The hardware threads of physical cores (named by their lowest thread),
    as the kernel lists their siblings; a core whose siblings are not listed
    is its id alone."""
    out: Set[int] = set()
    for c in cores:
        path = f"{sysfs}/devices/system/cpu/cpu{c}/topology/thread_siblings_list"
        try:
            with open(path) as f:
                sib = _idset(f.read())
        except (OSError, ValueError):
            sib = set()
        out.update(sib if c in sib else {c})
    return out


class LeaseBase:
    """A grant: its id, placement, memory figures, the rendered launch (when
    the request had argv) and the step's environment. ``lost`` says why,
    when berthd restarted and the lease could not be taken back."""

    def __init__(self, reply: Mapping[str, Any], local: bool, detached: bool,
                 program: Optional[Sequence[str]] = None) -> None:
        try:
            self.id: str = str(reply["lease"])
            self.placement = Placement.from_json(reply["placement"])
        except KeyError as e:
            raise ProtocolError(f"berthd's grant lacks {e}: {reply!r}") from e
        label = reply.get("label")
        self.label: Optional[str] = label if isinstance(label, str) else None
        self.memory_cap: Optional[int] = reply.get("memory_cap")
        self.budget_mb: Optional[int] = reply.get("budget_mb")
        self.launch: Optional[Launch] = (Launch.from_reply(reply["argv"], reply.get("env_delta"))
                                         if reply.get("argv") else None)
        self.env: Dict[str, str] = {str(k): str(v)
                                    for k, v in (reply.get("env") or {}).items()}
        self.owner_pid: Optional[int] = reply.get("owner_pid")
        self.granted: Optional[float] = reply.get("granted")
        warning = reply.get("warning")
        self.warning: Optional[str] = warning if isinstance(warning, str) else None
        self.local = local
        self.detached = detached
        self.program: Optional[List[str]] = list(program) if program else None
        self.raw: Dict[str, Any] = dict(reply)
        self.released = False
        self.lost: Optional[str] = None
        # the run-time limit given at acquire: run() and popen() stop the
        # step once it has run this long (their own time_limit wins)
        self.time_limit: Optional[float] = None
        # how the last step run() ran ended: sent with the release
        self.outcome: Optional[Dict[str, Any]] = None

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.id!r}, label={self.label!r}, "
                f"nodes={self.placement.nodes}, cores={self.placement.ncores}, "
                f"gpus={self.placement.gpus})")

    def _lose(self, why: str) -> None:
        """berthd restarted and this lease is gone: say so once."""
        self.lost = why
        self.released = True
        warnings.warn(f"berth: lease {self.id} ended while berthd restarted ({why}); its "
                      "cores may be someone else's now", RuntimeWarning, stacklevel=2)

    def environ(self, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """The step's environment: base (default os.environ) with the launch's
        changes and the BERTH_* variables."""
        env = self.launch.environ(base) if self.launch else dict(os.environ if base is None
                                                                 else base)
        env.update(self.env)
        return env

    def cpus(self) -> Set[int]:
        """For a local step: the hardware threads of its placed cores that
        this process may use."""
        usable = os.sched_getaffinity(0)
        threads = core_threads(self.placement.cores[0]) & usable
        if not threads:
            raise PlacementUnusable(
                f"none of the placed cores {self.placement.cores[0]} may be used here "
                f"(this process may use CPUs {sorted(usable)}); run local steps on "
                f"berthd's node")
        return threads

    def _srun_places(self) -> bool:
        a, n = (self.launch.argv if self.launch else []), len(self.program or [])
        return self.local and n > 0 and len(a) > n and a[-n:] == self.program

    def _local_launch(self, prog: Sequence[str]) -> Optional[List[str]]:
        """Where Slurm places every step (20.11 and newer) berthd launches a
        local step through srun on its node: its launch then ends with the
        program it was acquired with. That launch, running prog, with
        ``berth placed`` in front when a berth command is on PATH (it tells
        berthd the CPUs the step got); None when the step is bound here."""
        if not self._srun_places():
            return None
        a, n = self.launch.argv if self.launch else [], len(self.program or [])
        berth = shutil.which("berth")
        return a[:-n] + ([berth, "placed", "--"] if berth else []) + list(prog)

    def command(self, argv: Optional[Sequence[str]] = None) -> List[str]:
        """What to run: the rendered launch of a launched step; for a local
        step, its program (argv, else the one it was acquired with), or the
        srun launch that runs it where Slurm places local steps too."""
        if self.local:
            prog = list(argv) if argv else (self.launch.argv if self.launch else [])
            if not prog:
                raise BerthError("a local lease acquired without argv needs the program "
                                 "to run", "usage")
            launched = self._local_launch(list(argv) if argv else self.program or [])
            return launched or prog
        if not self.launch:
            raise BerthError(f"lease {self.id} has no rendered launch: acquire it with "
                             "argv=[...] to have berthd render one", "usage")
        return list(self.launch.argv)

    def popen(self, argv: Optional[Sequence[str]] = None, *,
              env: Optional[Mapping[str, str]] = None, grace: Optional[float] = None,
              time_limit: Optional[float] = None,
              **kwargs: Any) -> "subprocess.Popen[Any]":
        """Start the step: the rendered launch, or a local step's program
        with its CPU affinity set to the placed cores, under ``berth
        supervise`` (its every process, also one that leaves its process
        group, stays below it; stop it with berth.stop_step, not kill()).
        ``env`` (default os.environ) is the base the launch's changes and
        the BERTH_* variables go onto; ``grace`` (default BERTH_STOP_GRACE,
        else 10 s) is the time between the stopping SIGTERM and SIGKILL;
        ``time_limit`` (default the lease's) stops the step once it has run
        that long. The other arguments are subprocess.Popen's."""
        limit = time_limit if time_limit is not None else self.time_limit
        cmd, tree = _step.supervised(self.command(argv), _step.grace(grace), limit,
                                     len(self.placement.nodes))
        full_env = self.environ(env)
        if not self.local or self._srun_places():
            p = subprocess.Popen(cmd, env=full_env, **kwargs)
        else:
            # Affinity is per thread on Linux and a child inherits its
            # parent thread's: set this thread's, start the child, set it
            # back. Other threads are not touched, so this is safe under
            # threads.
            cpus = self.cpus()
            saved = os.sched_getaffinity(0)
            os.sched_setaffinity(0, cpus)
            try:
                p = subprocess.Popen(cmd, env=full_env, **kwargs)
            finally:
                os.sched_setaffinity(0, saved)
        setattr(p, "berth_supervised", tree)
        return p

    def _run(self, argv: Optional[Sequence[str]], input: Any, capture_output: bool,
             timeout: Optional[float], check: bool, env: Optional[Mapping[str, str]],
             kwargs: Dict[str, Any],
             started: Optional[Callable[["subprocess.Popen[Any]"], None]] = None,
             grace: Optional[float] = None, time_limit: Optional[float] = None
             ) -> "subprocess.CompletedProcess[Any]":
        """subprocess.run's rules on popen(), but a timeout (or any
        exception while it waits) stops the whole step with the stop
        sequence and returns what the pipes held without waiting for
        processes that keep them open; ``started`` is told the process."""
        if input is not None:
            if kwargs.get("stdin") is not None:
                raise ValueError("stdin and input arguments may not both be used")
            kwargs["stdin"] = subprocess.PIPE
        if capture_output:
            if kwargs.get("stdout") is not None or kwargs.get("stderr") is not None:
                raise ValueError("stdout and stderr arguments may not be used with "
                                 "capture_output")
            kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
        g = _step.grace(grace)
        limit = time_limit if time_limit is not None else self.time_limit
        t0 = time.monotonic()
        with self.popen(argv, env=env, grace=g, time_limit=limit, **kwargs) as p:
            if started:
                started(p)
            try:
                out, err = p.communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired as e:
                _step.stop(p, g)
                e.output, e.stderr = _step.drain(p)
                self._ended(p, t0, "timeout")
                raise
            except BaseException:
                _step.stop(p, g)
                self._ended(p, t0, "cancel")
                raise
            rc = p.poll()
        assert rc is not None
        # a step that ran to its limit was stopped by it (berth supervise)
        self._ended(p, t0, "time-limit" if limit and time.monotonic() - t0 >= limit
                    else None)
        if check and rc:
            raise subprocess.CalledProcessError(rc, p.args, out, err)
        return subprocess.CompletedProcess(p.args, rc, out, err)

    def _ended(self, p: "subprocess.Popen[Any]", t0: float,
               stopped: Optional[str]) -> None:
        """Keep how the step ended, for the release (PROTOCOL.md's outcome):
        the status as a shell says it (128+N for signal N)."""
        rc = p.returncode
        if rc is None:
            return
        status = 128 - rc if rc < 0 else rc
        out: Dict[str, Any] = {"status": status & 255,
                               "wall_s": round(time.monotonic() - t0, 3)}
        if 128 < status < 128 + 65:
            out["signal"] = status - 128
        if stopped:
            out["stopped"] = stopped
        self.outcome = out
