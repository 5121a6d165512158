"""A client of berthd over its Unix socket (protocol/PROTOCOL.md): one JSON
object per line, every request answered by one reply in order. A Client is
one connection; leases acquired on it end when it closes, so a crashed or
killed process frees what it held."""
import json
import os
import socket
import subprocess
import threading
from collections import deque
from dataclasses import dataclass, field
from types import TracebackType
from typing import (Any, Deque, Dict, Iterator, List, Mapping, Optional, Sequence, Set,
                    Type, Union)

from .errors import (BerthError, ConnectFailed, NotFound, PlacementUnusable, ProtocolError,
                     error_from_reply)

PROTOCOL_VERSION = 1
MAX_REPLY = 64 * 1024 * 1024      # bytes a reply or event line may have (PROTO_MAX_REPLY)

# The acquire fields this client sends (PROTOCOL.md "acquire"); None is left out.
ACQUIRE_FIELDS = (
    "ntasks", "min_tasks", "cpus_per_task", "min_cpus_per_task", "cores", "min_cores",
    "gpus", "min_gpus", "memory", "min_memory", "may_span_nodes", "local", "label",
    "priority", "timeout", "wait", "argv", "detach", "ttl", "owner_pid", "env",
    "duration",
)


@dataclass(frozen=True)
class Placement:
    """Nodes, core ids per node (the same ids on every node of a spanning
    placement), and GPUs (``gpu_ids`` None when their indices are unknown)."""
    nodes: List[str]
    cores: List[List[int]]
    gpus: int = 0
    gpu_ids: Optional[List[int]] = None

    @property
    def ncores(self) -> int:
        return sum(len(c) for c in self.cores)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"nodes": list(self.nodes),
                               "cores": [list(c) for c in self.cores], "gpus": self.gpus}
        if self.gpu_ids is not None:
            out["gpu_ids"] = list(self.gpu_ids)
        return out

    @classmethod
    def from_json(cls, o: Mapping[str, Any]) -> "Placement":
        try:
            ids = o.get("gpu_ids")
            return cls(nodes=[str(n) for n in o["nodes"]],
                       cores=[[int(i) for i in c] for c in o["cores"]],
                       gpus=int(o.get("gpus") or 0),
                       gpu_ids=None if ids is None else [int(i) for i in ids])
        except (KeyError, TypeError, ValueError) as e:
            raise ProtocolError(f"berthd sent a malformed placement ({e}): {o!r}") from e


@dataclass(frozen=True)
class Launch:
    """A rendered launch: run ``argv`` directly (never through a shell) with
    the names in ``unset`` removed from the environment and ``set`` added."""
    argv: List[str]
    unset: List[str] = field(default_factory=list)
    set: Dict[str, str] = field(default_factory=dict)

    def environ(self, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = dict(os.environ if base is None else base)
        for name in self.unset:
            env.pop(name, None)
        env.update(self.set)
        return env

    @classmethod
    def from_reply(cls, argv: Any, delta: Any) -> "Launch":
        delta = delta if isinstance(delta, Mapping) else {}
        return cls(argv=[str(a) for a in (argv or [])],
                   unset=[str(n) for n in delta.get("unset") or []],
                   set={str(k): str(v) for k, v in (delta.get("set") or {}).items()})


@dataclass(frozen=True)
class Event:
    """A watch event: ``kind`` is granted, waited, released or refused; the
    other members of the event are in ``data``."""
    kind: str
    time: float
    data: Dict[str, Any]

    @property
    def lease(self) -> Optional[str]:
        v = self.data.get("lease")
        return v if isinstance(v, str) else None

    @property
    def label(self) -> Optional[str]:
        v = self.data.get("label")
        return v if isinstance(v, str) else None


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


class Lease:
    """A grant: its id, placement, memory figures, the rendered launch (when
    the request had argv) and the step's environment. A context manager:
    leaving the block releases it. It also ends when its connection closes."""

    def __init__(self, client: "Client", reply: Mapping[str, Any], local: bool,
                 owns_client: bool = False) -> None:
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
        self.raw: Dict[str, Any] = dict(reply)
        self.released = False
        self._client = client
        self._owns_client = owns_client

    def __repr__(self) -> str:
        return (f"Lease({self.id!r}, label={self.label!r}, nodes={self.placement.nodes}, "
                f"cores={self.placement.ncores}, gpus={self.placement.gpus})")

    def release(self) -> None:
        """End the lease (once; later calls do nothing)."""
        if self.released:
            return
        try:
            self._client.release(self.id)
        finally:
            self.released = True
            if self._owns_client:
                self._client.close()

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.release()
        except NotFound:
            pass          # it ended already (ttl, owner, forced shutdown)
        except BerthError:
            if exc is None:
                raise     # otherwise the block's own error matters more

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

    def command(self, argv: Optional[Sequence[str]] = None) -> List[str]:
        """What to run: the rendered launch of a launched step; for a local
        step, its program (argv, else the one it was acquired with)."""
        if self.local:
            prog = list(argv) if argv else (self.launch.argv if self.launch else [])
            if not prog:
                raise BerthError("a local lease acquired without argv needs the program "
                                 "to run", "usage")
            return prog
        if not self.launch:
            raise BerthError(f"lease {self.id} has no rendered launch: acquire it with "
                             "argv=[...] to have berthd render one", "usage")
        return list(self.launch.argv)

    def popen(self, argv: Optional[Sequence[str]] = None,
              **kwargs: Any) -> "subprocess.Popen[Any]":
        """Start the step: the rendered launch, or a local step's program
        with its CPU affinity set to the placed cores. ``env`` defaults to
        environ(); other arguments go to subprocess.Popen."""
        cmd = self.command(argv)
        kwargs.setdefault("env", self.environ())
        if not self.local:
            return subprocess.Popen(cmd, **kwargs)
        # Affinity is per thread on Linux and a child inherits its parent
        # thread's: set this thread's, start the child, set it back. Other
        # threads are not touched, so this is safe under threads.
        cpus = self.cpus()
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
        try:
            return subprocess.Popen(cmd, **kwargs)
        finally:
            os.sched_setaffinity(0, saved)

    def run(self, argv: Optional[Sequence[str]] = None,
            **kwargs: Any) -> "subprocess.CompletedProcess[Any]":
        """popen() and wait; returns the CompletedProcess. As subprocess.run:
        ``check=True`` raises CalledProcessError on failure, ``timeout``
        kills the step and raises TimeoutExpired."""
        check = kwargs.pop("check", False)
        timeout = kwargs.pop("timeout", None)
        with self.popen(argv, **kwargs) as p:
            cmd = p.args
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise
        if check and p.returncode:
            raise subprocess.CalledProcessError(p.returncode, cmd, out, err)
        return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def socket_path(path: Optional[str] = None) -> str:
    """The socket to use: path, else $BERTH_SOCKET."""
    p = path or os.environ.get("BERTH_SOCKET")
    if not p:
        raise ConnectFailed("no berthd socket: BERTH_SOCKET is not set; start berthd with "
                            "`eval \"$(berthd --detach --print-env)\"` or give the path")
    return p


class Client:
    """One connection to berthd. Requests on it are served one at a time (a
    waiting acquire holds the connection); use one Client per thread that
    waits. Closing it ends its connection-bound leases."""

    def __init__(self, path: Optional[str] = None, timeout: Optional[float] = None) -> None:
        self.path = socket_path(path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(self.path)
        except OSError as e:
            self._sock.close()
            raise ConnectFailed(f"cannot connect to berthd at {self.path}: {e.strerror or e}; "
                                "is it running (berth status)?") from e
        self._file = self._sock.makefile("rb")
        self._lock = threading.Lock()
        self._next_id = 1
        self._events: Deque[Event] = deque()
        self.closed = False

    # -- plumbing --------------------------------------------------------

    def close(self) -> None:
        """Close the connection (its connection-bound leases end)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._file.close()
        finally:
            self._sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def _read(self) -> Dict[str, Any]:
        line = self._file.readline(MAX_REPLY + 1)
        if not line:
            raise ProtocolError(f"berthd closed the connection ({self.path})")
        if not line.endswith(b"\n"):
            raise ProtocolError("berthd sent a line over the limit of "
                                f"{MAX_REPLY} bytes or an unterminated one")
        try:
            msg = json.loads(line)
        except ValueError as e:
            raise ProtocolError(f"berthd sent a line that is not JSON: {e}") from e
        if not isinstance(msg, dict):
            raise ProtocolError(f"berthd sent {msg!r}, not an object")
        return msg

    @staticmethod
    def _event(msg: Mapping[str, Any]) -> Event:
        data = {k: v for k, v in msg.items() if k not in ("event", "time")}
        return Event(str(msg["event"]), float(msg.get("time") or 0), data)

    def request(self, op: str, **fields: Any) -> Dict[str, Any]:
        """Send one request (members that are None are left out) and return
        its successful reply; an error reply raises its BerthError class."""
        if self.closed:
            raise ConnectFailed("this client is closed")
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            msg = {"op": op, "id": rid}
            msg.update({k: v for k, v in fields.items() if v is not None})
            try:
                self._sock.sendall(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
                while True:
                    reply = self._read()
                    if "event" in reply and "id" not in reply:
                        self._events.append(self._event(reply))
                        continue
                    break
            except socket.timeout as e:
                # A late reply would answer the wrong request: give up the
                # connection (and with it, its leases).
                limit = self._sock.gettimeout()
                self.close()
                raise ProtocolError(f"no reply from berthd within the client's timeout "
                                    f"of {limit} s; closed the connection") from e
            except OSError as e:
                raise ProtocolError(f"berthd closed the connection ({self.path}): "
                                    f"{e.strerror or e}") from e
        if reply.get("id") is None and reply.get("ok") is False:
            raise error_from_reply(reply)     # berthd could not read the request's id
        if reply.get("id") != rid:
            raise ProtocolError(f"berthd answered request {rid} with {reply!r}")
        if reply.get("ok") is not True:
            raise error_from_reply(reply)
        return reply

    # -- the operations ---------------------------------------------------

    def hello(self, version: int = PROTOCOL_VERSION) -> Dict[str, Any]:
        """Versions: the reply's ``version``, ``versions`` and ``server``."""
        return self.request("hello", version=version)

    def acquire(self, *, ntasks: Optional[int] = None, cpus_per_task: Optional[int] = None,
                cores: Optional[int] = None, gpus: Optional[int] = None,
                memory: Optional[int] = None, min_tasks: Optional[int] = None,
                min_cpus_per_task: Optional[int] = None, min_cores: Optional[int] = None,
                min_gpus: Optional[int] = None, min_memory: Optional[int] = None,
                may_span_nodes: Optional[bool] = None, local: Optional[bool] = None,
                label: Optional[str] = None, priority: Optional[int] = None,
                timeout: Optional[float] = None, wait: Optional[bool] = None,
                argv: Optional[Sequence[str]] = None, detach: Optional[bool] = None,
                ttl: Optional[float] = None, owner_pid: Optional[int] = None,
                duration: Optional[float] = None, env: bool = True) -> Lease:
        """Ask for a placement; waits in berthd's queue until it fits (unless
        ``wait=False``). The fields are those of PROTOCOL.md's acquire;
        ``duration`` (seconds) is checked against the job's end and lets the
        step backfill onto nodes held for a waiting step. Returns the
        Lease (a context manager that releases it)."""
        fields: Dict[str, Any] = dict(
            ntasks=ntasks, cpus_per_task=cpus_per_task, cores=cores, gpus=gpus,
            memory=memory, min_tasks=min_tasks, min_cpus_per_task=min_cpus_per_task,
            min_cores=min_cores, min_gpus=min_gpus, min_memory=min_memory,
            may_span_nodes=may_span_nodes, local=local, label=label, priority=priority,
            timeout=timeout, wait=wait, argv=list(argv) if argv is not None else None,
            detach=detach, ttl=ttl, owner_pid=owner_pid, duration=duration,
            env=True if env else None)
        return self._acquire(fields, owns_client=False)

    def _acquire(self, fields: Mapping[str, Any], owns_client: bool) -> Lease:
        unknown = set(fields) - set(ACQUIRE_FIELDS)
        if unknown:
            raise TypeError(f"acquire: unknown field(s) {', '.join(sorted(unknown))}")
        reply = self.request("acquire", **fields)
        lease = Lease(self, reply, bool(fields.get("local")), owns_client)
        if lease.warning:
            import warnings
            warnings.warn(f"berthd: {lease.warning}", RuntimeWarning, stacklevel=3)
        return lease

    def release(self, lease: Union[str, Lease]) -> None:
        """End a lease (by id or object)."""
        lid = lease.id if isinstance(lease, Lease) else lease
        self.request("release", lease=lid)
        if isinstance(lease, Lease):
            lease.released = True

    def render(self, placement: Union[Placement, Mapping[str, Any]], argv: Sequence[str],
               ntasks: int = 1, cpus_per_task: Optional[int] = None,
               memory_cap: Optional[int] = None) -> Launch:
        """The launch for a given placement on this machine, holding nothing."""
        p = placement.to_json() if isinstance(placement, Placement) else dict(placement)
        reply = self.request("render", placement=p, argv=list(argv), ntasks=ntasks,
                             cpus_per_task=cpus_per_task, memory_cap=memory_cap)
        return Launch.from_reply(reply.get("argv"), reply.get("env_delta"))

    def resources(self, lease: Union[str, Lease, None] = None) -> Dict[str, Any]:
        """The whole allocation, or the view of one lease's placement."""
        lid = lease.id if isinstance(lease, Lease) else lease
        reply = self.request("resources", lease=lid)
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    def status(self, time_left: bool = False) -> Dict[str, Any]:
        """The ledger: ``allocation`` (with ``time_left_s`` when the end is
        known), ``leases``, ``queue``, ``daemon``. With time_left, berthd
        finds the end even if that costs it one scheduler query."""
        reply = self.request("status", time_left=True if time_left else None)
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    def watch(self, history: bool = False) -> Iterator[Event]:
        """Turn this connection into a stream of events and iterate over
        them until berthd closes it (or the client is closed). With history,
        the events logged since berthd started come first."""
        self.request("watch", history=True if history else None)
        while True:
            while self._events:
                yield self._events.popleft()
            try:
                with self._lock:
                    msg = self._read()
            except (ProtocolError, OSError, ValueError):
                if self.closed:
                    return
                raise
            if "event" in msg and "id" not in msg:
                yield self._event(msg)

    def shutdown(self, force: bool = False) -> None:
        """Stop berthd: drain (let the leases end) or force."""
        self.request("shutdown", mode="force" if force else "drain")


def connect(path: Optional[str] = None, timeout: Optional[float] = None) -> Client:
    """A connection to berthd at path (default: $BERTH_SOCKET)."""
    return Client(path, timeout)


def acquire(path: Optional[str] = None, **fields: Any) -> Lease:
    """Acquire on a connection of its own, closed when the lease is released
    (or the process exits): ``with berth.acquire(cores=4) as lease: ...``."""
    client = Client(path)
    try:
        fields.setdefault("env", True)
        if "argv" in fields and fields["argv"] is not None:
            fields["argv"] = list(fields["argv"])
        return client._acquire({k: v for k, v in fields.items() if v is not None},
                               owns_client=True)
    except BaseException:
        client.close()
        raise


def watch(path: Optional[str] = None, history: bool = False) -> Iterator[Event]:
    """Events on a connection of their own."""
    client = Client(path)
    try:
        yield from client.watch(history)
    finally:
        client.close()
