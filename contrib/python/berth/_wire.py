# SPDX-License-Identifier: MIT
"""What the threaded client (client.py) and the asyncio one (aio.py) share
and that does no I/O: where the socket is, how a request is written and a
reply read and judged, what a resent request carries, how long to wait
between tries to reconnect, and the objects the replies describe."""
import itertools
import json
import os
import random
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Set

from .errors import ConnectFailed, ProtocolError, error_from_reply

PROTOCOL_VERSION = 1
MAX_REPLY = 64 * 1024 * 1024      # bytes a reply or event line may have (PROTO_MAX_REPLY)
SUN_PATH_MAX = 107                # bytes of a Unix socket path (sun_path less its NUL)
RECONNECT_S = 60.0                # how long in all a client tries to reach a restarted berthd

# The acquire fields this client sends (PROTOCOL.md "acquire"); None is left out.
# The deprecated gpus_per_task and min_gpus_per_task are not offered.
ACQUIRE_FIELDS = (
    "ntasks", "min_tasks", "cpus_per_task", "min_cpus_per_task", "cores", "min_cores",
    "gpus", "min_gpus", "memory", "min_memory", "may_span_nodes", "local", "label",
    "priority", "timeout", "wait", "argv", "detach", "ttl", "owner_pid", "env",
    "duration",
)

# PROTOCOL.md "Reconnecting after a restart": requests not sent again on a
# new connection (a watch ends with berthd; a closed connection after a
# shutdown is its answer), how many times one request is, and how long a
# missing socket means berthd stopped on purpose.
NOT_RESENT = frozenset({"shutdown", "watch"})
MAX_RESENDS = 10
GONE_S = 1.0


def first_id() -> int:
    """Request ids unique within the process (a resent acquire is matched
    by its id): each connection starts at a random point below 2^40."""
    return random.SystemRandom().randrange(1, 1 << 40)


def request_ids() -> Iterator[int]:
    """A connection's request ids, from first_id() on, each once."""
    return itertools.count(first_id())


# -- where berthd is ----------------------------------------------------------

def default_socket_path(environ: Mapping[str, str], uid: int) -> str:
    """The socket berthd takes when given no --socket, as the CLI and
    libberth find it (protocol/socket_path.c): the job is $SLURM_JOB_ID, else
    $PBS_JOBID, else "local" (also for a job id holding a '/');
    $XDG_RUNTIME_DIR/berth/JOB.sock when that is an absolute path, else
    /tmp/berth-UID/JOB.sock."""
    job = environ.get("SLURM_JOB_ID") or environ.get("PBS_JOBID") or ""
    if not job or "/" in job:
        job = "local"
    xdg = environ.get("XDG_RUNTIME_DIR") or ""
    path = f"{xdg}/berth/{job}.sock" if xdg.startswith("/") else f"/tmp/berth-{uid}/{job}.sock"
    if len(path.encode()) > SUN_PATH_MAX:
        raise ConnectFailed(f"socket path for job {job} is too long (at most {SUN_PATH_MAX} "
                            f"bytes): {path}; set BERTH_SOCKET or give the path")
    return path


def socket_path(path: Optional[str] = None) -> str:
    """The socket to use: path, else $BERTH_SOCKET, else the default one
    (default_socket_path)."""
    return path or os.environ.get("BERTH_SOCKET") or default_socket_path(os.environ,
                                                                          os.getuid())


def path_origin(path: Optional[str]) -> str:
    """How the socket was named, for messages."""
    if path:
        return ""
    if os.environ.get("BERTH_SOCKET"):
        return " (from BERTH_SOCKET)"
    return " (the default socket: BERTH_SOCKET is not set)"


class Endpoint:
    """Where a client connects and how long it waits, as both clients take
    them: the socket path (and where that came from, for messages), the
    connect and reply timeouts, and the seconds in all to reach a restarted
    berthd (0: do not try)."""

    def __init__(self, path: Optional[str], timeout: Optional[float],
                 reply_timeout: Optional[float], reconnect: Optional[float]) -> None:
        self.path = socket_path(path)
        self._origin = path_origin(path)
        self.connect_timeout = timeout
        self.reply_timeout = reply_timeout
        self.reconnect = reconnect or 0.0


def connect_error(path: str, origin: str, errno_name: Optional[str],
                  reason: str) -> ConnectFailed:
    """The ConnectFailed for a socket that could not be reached."""
    if errno_name == "ENOENT":
        return ConnectFailed(missing=True, message=f"no berthd socket at {path}{origin}; start berthd first "
                             "(eval \"$(berthd --detach --print-env)\") or set BERTH_SOCKET "
                             "to its socket")
    if errno_name == "ECONNREFUSED":
        return ConnectFailed(f"berthd is not running at {path}{origin} (the socket is left "
                             "over from one that stopped); start it again")
    return ConnectFailed(f"cannot connect to berthd at {path}{origin}: {reason}; is it "
                         "running (berth status)?")


# -- lines --------------------------------------------------------------------

def encode(op: str, rid: int, fields: Mapping[str, Any]) -> bytes:
    """One request line; members that are None are left out."""
    msg: Dict[str, Any] = {"op": op, "id": rid}
    msg.update({k: v for k, v in fields.items() if v is not None})
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


class Lines:
    """Bytes in, whole decoded lines out."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def clear(self) -> None:
        self._buf.clear()

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next(self) -> Optional[Dict[str, Any]]:
        """The next whole line's object, or None until more bytes come."""
        i = self._buf.find(b"\n")
        if i < 0:
            if len(self._buf) > MAX_REPLY:
                raise ProtocolError(f"berthd sent a line over the limit of {MAX_REPLY} bytes")
            return None
        line = bytes(self._buf[:i])
        del self._buf[:i + 1]
        return decode(line)


def decode(line: bytes) -> Dict[str, Any]:
    try:
        msg = json.loads(line)
    except ValueError as e:
        raise ProtocolError(f"berthd sent a line that is not JSON: {e}") from e
    if not isinstance(msg, dict):
        raise ProtocolError(f"berthd sent {msg!r}, not an object")
    return msg


def is_event(msg: Mapping[str, Any]) -> bool:
    return "event" in msg and "id" not in msg


def judge(rid: int, reply: Dict[str, Any]) -> Dict[str, Any]:
    """The reply to request rid if it succeeded; else raise its error."""
    if reply.get("id") is None and reply.get("ok") is False:
        raise error_from_reply(reply)     # berthd could not read the request's id
    if reply.get("id") != rid:
        raise ProtocolError(f"berthd answered request {rid} with {reply!r}")
    if reply.get("ok") is not True:
        raise error_from_reply(reply)
    return reply


def result(reply: Mapping[str, Any]) -> Dict[str, Any]:
    """A reply's members less its id and ok."""
    return {k: v for k, v in reply.items() if k not in ("id", "ok")}


# -- resending after a restart ------------------------------------------------

def backoff(total: float, first: float = 0.05, cap: float = 1.0) -> Iterator[float]:
    """The pauses before each try to reconnect: none before the first, then
    doubling from ``first`` up to ``cap``, as long as their sum stays within
    ``total`` seconds (about a minute by default)."""
    yield 0.0
    spent, delay = 0.0, first
    while spent + delay <= total:
        yield delay
        spent += delay
        delay = min(cap, delay * 2)


class Reconnecting:
    """One reconnection's tries, kept the same way by both clients: the
    pauses between them (backoff), the last failure, and whether berthd
    stopped on purpose, told from a crash as a crash leaves the socket and a
    restart replaces it at once, while a socket missing GONE_S seconds in a
    row was removed by a berthd that stopped; then the error that ends it.
    The loop itself stays in each client, one blocking and one awaiting."""

    def __init__(self, why: str, path: str, total: float) -> None:
        self.why, self.path, self.total = why, path, total
        self.last = why
        self.stopped = False
        self._missing_since: Optional[float] = None

    def pauses(self) -> Iterator[float]:
        return backoff(self.total)

    def refused(self, err: ConnectFailed, now: float) -> bool:
        """Note a try that could not connect; True when berthd stopped and
        there is no use trying again."""
        self.last = err.message
        if not err.missing:
            self._missing_since = None
        elif self._missing_since is None:
            self._missing_since = now
        self.stopped = (self._missing_since is not None
                        and now - self._missing_since >= GONE_S)
        return self.stopped

    def failed(self, held: Sequence[str]) -> ConnectFailed:
        """The error once the tries are over; held: the leases' ids."""
        return ConnectFailed(
            f"berthd went away ({self.why}) and "
            + (f"its socket {self.path} has been gone for {GONE_S:g} s: it stopped (a "
               "shutdown or SIGTERM removes it)" if self.stopped else
               f"could not be reached again at {self.path} within {self.total:g} s "
               f"({self.last})")
            + f"; the leases held on this connection ({', '.join(held) or 'none'}) may "
            "have ended")


def resent_fields(op: str, fields: Mapping[str, Any]) -> Dict[str, Any]:
    """A request sent again, under its id, after berthd went away with it
    unanswered: an acquire says so (``resume``: berthd gives it back its
    place in the queue, or the lease it granted just before it went away);
    nothing else changes."""
    out = dict(fields)
    if op == "acquire":
        out["resume"] = True
    return out


def acquire_fields(scope: Mapping[str, Any]) -> Dict[str, Any]:
    """The acquire fields among the arguments of an acquire function (its
    locals(), taken before it sets any of its own), in the order they were
    declared. Each acquire function spells its fields out as keywords so
    that mypy checks a caller's names and types; this hands them on without
    naming each a second time."""
    return {k: v for k, v in scope.items() if k in ACQUIRE_FIELDS}


def acquire_request(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """An acquire's members as sent: None left out, argv a list, env asked
    for unless False; an unknown name is a TypeError."""
    unknown: Set[str] = set(fields) - set(ACQUIRE_FIELDS)
    if unknown:
        raise TypeError(f"acquire: unknown field(s) {', '.join(sorted(unknown))}; "
                        f"the fields are {', '.join(ACQUIRE_FIELDS)}")
    out = {k: v for k, v in fields.items() if v is not None}
    if "argv" in out:
        if isinstance(out["argv"], (str, bytes)):
            raise TypeError("acquire: argv is a sequence of strings, not one string")
        out["argv"] = [str(a) for a in out["argv"]]
    if out.get("env", True):
        out["env"] = True
    else:
        del out["env"]
    return out


# -- what replies describe -------------------------------------------------------

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


def render_request(placement: Any, argv: Sequence[str], ntasks: int,
                   cpus_per_task: Optional[int],
                   memory_cap: Optional[int]) -> Dict[str, Any]:
    p = placement.to_json() if isinstance(placement, Placement) else dict(placement)
    return {"placement": p, "argv": list(argv), "ntasks": ntasks,
            "cpus_per_task": cpus_per_task, "memory_cap": memory_cap}


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

    @classmethod
    def from_json(cls, msg: Mapping[str, Any]) -> "Event":
        data = {k: v for k, v in msg.items() if k not in ("event", "time")}
        return cls(str(msg["event"]), float(msg.get("time") or 0), data)
