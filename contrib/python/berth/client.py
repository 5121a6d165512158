# SPDX-License-Identifier: MIT
"""A client of berthd over its Unix socket (protocol/PROTOCOL.md): one JSON
object per line, every request answered by one reply in order. A Client is
one connection; leases acquired on it end when it closes, so a crashed or
killed process frees what it held. If berthd goes away (a crash, a restart)
the client connects again, takes its leases back by id (``reclaim``) and
sends the request that was waiting again."""
import errno
import os
import select
import socket
import subprocess
import threading
import time
import warnings
from collections import deque
from types import TracebackType
from typing import (Any, Deque, Dict, Iterator, List, Mapping, Optional, Sequence, Set,
                    Type, Union)

from . import _wire
from ._wire import (ACQUIRE_FIELDS, PROTOCOL_VERSION, RECONNECT_S, Event, Launch,
                    Placement, socket_path)
from .errors import (BerthError, Cancelled, ClientTimeout, ConnectFailed, NotFound,
                     ProtocolError)
from .lease import LeaseBase, core_threads

__all__ = ["ACQUIRE_FIELDS", "PROTOCOL_VERSION", "Client", "Event", "Launch", "Lease",
           "Placement", "acquire", "connect", "core_threads", "socket_path", "watch"]


STATUS_BRIEF_MAX = 1000     # the most nodes, leases and waiting a brief status lists


def status_fields(time_left: bool, brief: Optional[int]) -> Dict[str, Any]:
    """A status request's members (None left out), for both clients: brief
    must be a whole number (an int, not a bool) from 1 to STATUS_BRIEF_MAX,
    else ValueError, as berthd would refuse it."""
    if brief is not None and (isinstance(brief, bool) or not isinstance(brief, int)
                              or not 1 <= brief <= STATUS_BRIEF_MAX):
        raise ValueError(f"status brief {brief!r}: give the number of nodes, leases and "
                         f"waiting requests to list, a whole number from 1 to "
                         f"{STATUS_BRIEF_MAX}")
    return {"time_left": True if time_left else None, "brief": brief}


class _Lost(Exception):
    """The connection to berthd ended under a request (not by close())."""


class _Timeout(Exception):
    pass


class Lease(LeaseBase):
    """A grant (see LeaseBase), held on a Client's connection. A context
    manager: leaving the block releases it. It also ends when its
    connection closes."""

    def __init__(self, client: "Client", reply: Mapping[str, Any], local: bool,
                 detached: bool = False, owns_client: bool = False,
                 program: Optional[Sequence[str]] = None) -> None:
        super().__init__(reply, local, detached, program)
        self._client = client
        self._owns_client = owns_client

    def release(self) -> None:
        """End the lease (once; later calls do nothing)."""
        if self.released:
            if self._owns_client:
                self._client.close()
            return
        try:
            self._client.release(self.id, outcome=self.outcome)
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

    def run(self, argv: Optional[Sequence[str]] = None, *, input: Any = None,
            capture_output: bool = False, timeout: Optional[float] = None,
            check: bool = False, env: Optional[Mapping[str, str]] = None,
            grace: Optional[float] = None, time_limit: Optional[float] = None,
            **kwargs: Any) -> "subprocess.CompletedProcess[Any]":
        """Run the step and wait, taking what subprocess.run takes (input,
        capture_output, text, timeout, check, cwd, stdout, ...): ``check``
        raises CalledProcessError on failure; at ``timeout`` the step is
        stopped (SIGTERM to every process of it, SIGKILL after ``grace``,
        default BERTH_STOP_GRACE, else 10 s) and TimeoutExpired raised with
        the output captured so far, at most the grace later. ``time_limit``
        (default the lease's) stops the step the same way once it has run
        that long, and returns its status. ``env`` is the base environment
        the launch's changes and the BERTH_* variables go onto (default
        os.environ)."""
        return self._run(argv, input, capture_output, timeout, check, env, kwargs,
                         None, grace, time_limit)


class Client(_wire.Endpoint):
    """One connection to berthd. Requests on it are served one at a time (a
    waiting acquire holds the connection); use one Client per thread that
    waits. Closing it, from any thread, ends its connection-bound leases,
    makes a request waiting on it raise Cancelled and ends a watch.

    ``timeout`` bounds connecting (None: as long as it takes);
    ``reply_timeout`` bounds the wait for the reply to any request but an
    acquire that waits in berthd's queue (that one honours its own
    ``timeout``); past it ClientTimeout is raised and the connection and
    its leases are kept. ``reconnect``: seconds in all to try to reach
    berthd again when it goes away (0 or None: do not)."""

    def __init__(self, path: Optional[str] = None, timeout: Optional[float] = None, *,
                 reply_timeout: Optional[float] = None,
                 reconnect: Optional[float] = RECONNECT_S) -> None:
        super().__init__(path, timeout, reply_timeout, reconnect)
        self._lock = threading.RLock()        # one request at a time
        self._state = threading.Lock()        # the socket against close()
        self._closing = threading.Event()
        self._lines = _wire.Lines()
        self._ids = _wire.request_ids()
        self._events: Deque[Event] = deque()
        self._watching = False
        self._abandoned: Set[int] = set()     # ids whose reply came too late to wait for
        self._leases: Dict[str, Lease] = {}   # connection-bound leases, to reclaim
        self.reconnects = 0
        self._sock: Optional[socket.socket] = self._open()

    # -- plumbing --------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closing.is_set()

    def _open(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        deadline = (None if self.connect_timeout is None
                    else time.monotonic() + self.connect_timeout)
        sock.settimeout(self.connect_timeout)
        try:
            while True:
                try:
                    sock.connect(self.path)
                    break
                except (BlockingIOError, InterruptedError):
                    # A full listen backlog: EAGAIN on a socket with a timeout.
                    if deadline is not None and time.monotonic() >= deadline:
                        raise socket.timeout("timed out") from None
                    time.sleep(0.01)
        except socket.timeout:
            sock.close()
            raise ConnectFailed(f"cannot connect to berthd at {self.path}{self._origin} "
                                f"within {self.connect_timeout} s (the connect timeout)"
                                ) from None
        except OSError as e:
            sock.close()
            raise _wire.connect_error(self.path, self._origin, errno.errorcode.get(e.errno or 0),
                                      e.strerror or str(e)) from e
        sock.settimeout(None)
        return sock

    def close(self) -> None:
        """Close the connection (its connection-bound leases end). Safe from
        any thread: a request waiting on it raises Cancelled, a watch ends."""
        with self._state:
            if self._closing.is_set():
                return
            self._closing.set()
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)   # wakes a thread blocked on it
                except OSError:
                    pass
        with self._lock:          # which lets go at once
            self._drop()

    def _install(self, sock: socket.socket) -> None:
        with self._state:
            if self._closing.is_set():
                sock.close()
                raise Cancelled("the client was closed while it reconnected to berthd")
            self._sock = sock

    def _drop(self) -> None:
        with self._state:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
        self._lines.clear()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise _Lost("not connected")
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise _Lost(e.strerror or str(e)) from e

    def _read(self, deadline: Optional[float]) -> Dict[str, Any]:
        """The next line from berthd (a reply or an event)."""
        while True:
            msg = self._lines.next()
            if msg is not None:
                return msg
            if self._sock is None:
                raise _Lost("not connected")
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            p = select.poll()
            p.register(self._sock, select.POLLIN)
            if not p.poll(None if wait is None else int(wait * 1000) + 1):
                if deadline is not None and time.monotonic() >= deadline:
                    raise _Timeout()
                continue
            try:
                data = self._sock.recv(1 << 16)
            except OSError as e:
                raise _Lost(e.strerror or str(e)) from e
            if not data:
                raise _Lost("berthd closed the connection")
            self._lines.feed(data)

    def _reply(self, rid: int, deadline: Optional[float]) -> Dict[str, Any]:
        while True:
            msg = self._read(deadline)
            if _wire.is_event(msg):
                if self._watching:
                    self._events.append(Event.from_json(msg))
                continue
            if msg.get("id") != rid and msg.get("id") in self._abandoned:
                self._late(msg)
                continue
            return msg

    def _late(self, msg: Mapping[str, Any]) -> None:
        """A reply that came after its request gave up: drop it, and end a
        lease it granted (nobody holds it)."""
        self._abandoned.discard(msg["id"])
        lid = msg.get("lease")
        if msg.get("ok") is True and isinstance(lid, str) and "placement" in msg \
                and lid not in self._leases:
            rid = next(self._ids)
            self._send(_wire.encode("release", rid, {"lease": lid}))
            self._abandoned.add(rid)

    def _roundtrip(self, op: str, fields: Mapping[str, Any], waits: bool,
                   rid: Optional[int] = None) -> Dict[str, Any]:
        """Send and read the reply on the connection as it is (no retry)."""
        rid = next(self._ids) if rid is None else rid
        self._send(_wire.encode(op, rid, fields))
        limit = None if waits or self.reply_timeout is None else self.reply_timeout
        deadline = None if limit is None else time.monotonic() + limit
        try:
            return _wire.judge(rid, self._reply(rid, deadline))
        except _Timeout:
            self._abandoned.add(rid)
            raise ClientTimeout(f"no reply to {op} from berthd within {limit} s (the "
                                "client's reply_timeout); the connection and its leases "
                                "are kept") from None

    def _call(self, op: str, fields: Mapping[str, Any], waits: bool = False) -> Dict[str, Any]:
        """A request and its successful reply; if berthd goes away first,
        connect again, reclaim the leases and send it again."""
        if self.closed:
            raise ConnectFailed("this client is closed")
        with self._lock:
            rid = next(self._ids)
            sent = dict(fields)
            resent = 0
            while True:
                if self.closed:
                    raise Cancelled(f"the client was closed before {op} was answered")
                try:
                    return self._roundtrip(op, sent, waits, rid)
                except NotFound:
                    if resent and op == "release":
                        return {"lease": fields.get("lease")}   # it ended with the old berthd
                    raise
                except _Lost as e:
                    if self.closed:
                        raise Cancelled(f"the client was closed while {op} waited for its "
                                        "reply") from None
                    if not self.reconnect or op in _wire.NOT_RESENT \
                            or resent >= _wire.MAX_RESENDS:
                        self._drop()
                        raise ProtocolError(f"berthd closed the connection ({self.path}): "
                                            f"{e}" + (f" ({resent} times under this {op})"
                                                      if resent else "")) from None
                    skip = {str(fields["lease"])} if op == "release" else set()
                    self._reconnect(str(e), skip)
                    sent = _wire.resent_fields(op, fields)
                    resent += 1

    def _reconnect(self, why: str, skip: Optional[Set[str]] = None) -> None:
        """Connect again (bounded backoff) and reclaim the held leases."""
        self._drop()
        tries = _wire.Reconnecting(why, self.path, self.reconnect)
        for pause in tries.pauses():
            if self._closing.wait(pause):
                raise Cancelled("the client was closed while it reconnected to berthd")
            try:
                self._install(self._open())
            except ConnectFailed as e:
                if tries.refused(e, time.monotonic()):
                    break
                continue
            self._abandoned.clear()
            try:
                for lid, lease in list(self._leases.items()):
                    if skip and lid in skip:
                        continue
                    try:
                        self._roundtrip("reclaim", {"lease": lid}, waits=False)
                    except BerthError as e:
                        del self._leases[lid]
                        lease._lose(e.message)
            except _Lost as e:
                self._drop()
                tries.last = str(e)
                continue
            self.reconnects += 1
            return
        raise tries.failed(list(self._leases))

    def request(self, op: str, **fields: Any) -> Dict[str, Any]:
        """Send one request (members that are None are left out) and return
        its successful reply; an error reply raises its BerthError class."""
        return self._call(op, fields, waits=op == "acquire" and fields.get("wait") is not False)

    # -- the operations ---------------------------------------------------

    def hello(self, version: int = PROTOCOL_VERSION) -> Dict[str, Any]:
        """Versions: the reply's ``version``, ``versions`` and ``server``."""
        return self.request("hello", version=version)

    # The acquire keywords are written out here and in berth.acquire,
    # AsyncClient.acquire and berth.aio.acquire rather than shared as
    # **fields: mypy --strict must reject a misspelt or mistyped field, and
    # the mypy of Debian 12 (1.0) cannot type **kwargs from one TypedDict
    # (PEP 692's Unpack is an incomplete feature there). What they do with
    # the fields is shared (_wire.acquire_fields, _wire.acquire_request).
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
                duration: Optional[float] = None, time_limit: Optional[float] = None,
                env: bool = True) -> Lease:
        """Ask for a placement; waits in berthd's queue until it fits (unless
        ``wait=False``), at most ``timeout`` seconds (then WaitTimeout). The
        fields are those of PROTOCOL.md's acquire; ``duration`` (seconds) is
        checked against the job's end and lets the step backfill onto nodes
        held for a waiting step; ``time_limit`` (seconds, the client's own)
        stops a step the lease's run() or popen() started once it has run
        that long. Returns the Lease (a context manager that releases it)."""
        return self._acquire(_wire.acquire_fields(locals()), owns_client=False,
                             time_limit=time_limit)

    def _acquire(self, fields: Mapping[str, Any], owns_client: bool,
                 time_limit: Optional[float] = None) -> Lease:
        req = _wire.acquire_request(fields)
        reply = self._call("acquire", req, waits=req.get("wait") is not False)
        lease = Lease(self, reply, bool(req.get("local")), bool(req.get("detach")),
                      owns_client, req.get("argv"))
        lease.time_limit = time_limit
        if not lease.detached:
            self._leases[lease.id] = lease
        if lease.warning:
            warnings.warn(f"berthd: {lease.warning}", RuntimeWarning, stacklevel=3)
        return lease

    def release(self, lease: Union[str, Lease],
                outcome: Optional[Mapping[str, Any]] = None) -> None:
        """End a lease (by id or object); ``outcome`` says how its step
        ended (PROTOCOL.md: status, signal, stopped, wall_s, ...), default
        the one its last run() left."""
        lid = lease.id if isinstance(lease, Lease) else lease
        if outcome is None and isinstance(lease, Lease):
            outcome = lease.outcome
        extra = {"outcome": dict(outcome)} if outcome else {}
        try:
            self.request("release", lease=lid, **extra)
        except NotFound:
            self._leases.pop(lid, None)
            raise
        self._leases.pop(lid, None)
        if isinstance(lease, Lease):
            lease.released = True

    def render(self, placement: Union[Placement, Mapping[str, Any]], argv: Sequence[str],
               ntasks: int = 1, cpus_per_task: Optional[int] = None,
               memory_cap: Optional[int] = None) -> Launch:
        """The launch for a given placement on this machine, holding nothing."""
        reply = self._call("render", _wire.render_request(placement, argv, ntasks,
                                                          cpus_per_task, memory_cap))
        return Launch.from_reply(reply.get("argv"), reply.get("env_delta"))

    def resources(self, lease: Union[str, Lease, None] = None) -> Dict[str, Any]:
        """The whole allocation, or the view of one lease's placement."""
        lid = lease.id if isinstance(lease, Lease) else lease
        return _wire.result(self.request("resources", lease=lid))

    def status(self, time_left: bool = False, brief: Optional[int] = None) -> Dict[str, Any]:
        """The ledger: ``allocation`` (with ``time_left_s`` when the end is
        known), ``leases``, ``queue``, ``daemon``. With time_left, berthd
        finds the end even if that costs it one scheduler query.

        ``brief=N`` (a whole number from 1 to STATUS_BRIEF_MAX) asks for a
        person's view, small on a big job: the same members, with ``brief``
        N; ``allocation["totals"]`` sums the whole job (nodes, cores,
        leases, cores_used, cores_free, gpus_*, nodes_held, nodes_full,
        nodes_idle, nodes_partly, memory_*), ``allocation["nodes"]`` holds
        only the N busiest nodes (those holding a lease, fewest free cores
        first; every node when there are at most N), ``leases`` the N
        oldest, ``queue`` its first N; ``daemon``'s counts stay whole. Any
        other brief raises ValueError before anything is sent."""
        return _wire.result(self.request("status", **status_fields(time_left, brief)))

    def watch(self, history: bool = False) -> Iterator[Event]:
        """Turn this connection into a stream of events and iterate over
        them until berthd closes it or the client is closed (from any
        thread). With history, the events logged since berthd started come
        first. A watch ends with berthd (the client's next request
        reconnects and reclaims its leases)."""
        self._watching = True
        self._call("watch", {"history": True if history else None})
        while True:
            while self._events:
                yield self._events.popleft()
            if self.closed:
                return
            with self._lock:
                try:
                    msg = self._read(None)
                except _Lost:
                    self._drop()
                    self._watching = False
                    return
            if _wire.is_event(msg):
                yield Event.from_json(msg)
            elif msg.get("id") in self._abandoned:
                self._late(msg)

    def shutdown(self, force: bool = False) -> None:
        """Stop berthd: drain (let the leases end) or force."""
        self.request("shutdown", mode="force" if force else "drain")


def connect(path: Optional[str] = None, timeout: Optional[float] = None, *,
            reply_timeout: Optional[float] = None,
            reconnect: Optional[float] = RECONNECT_S) -> Client:
    """A connection to berthd at path (default: $BERTH_SOCKET, else the
    default socket of this job, as the CLI finds it). ``timeout`` bounds
    connecting only; see Client for the others."""
    return Client(path, timeout, reply_timeout=reply_timeout, reconnect=reconnect)


# Its keywords are Client.acquire's, written out again for mypy (see there).
def acquire(path: Optional[str] = None, *, ntasks: Optional[int] = None,
            cpus_per_task: Optional[int] = None, cores: Optional[int] = None,
            gpus: Optional[int] = None, memory: Optional[int] = None,
            min_tasks: Optional[int] = None, min_cpus_per_task: Optional[int] = None,
            min_cores: Optional[int] = None, min_gpus: Optional[int] = None,
            min_memory: Optional[int] = None, may_span_nodes: Optional[bool] = None,
            local: Optional[bool] = None, label: Optional[str] = None,
            priority: Optional[int] = None, timeout: Optional[float] = None,
            wait: Optional[bool] = None, argv: Optional[Sequence[str]] = None,
            detach: Optional[bool] = None, ttl: Optional[float] = None,
            owner_pid: Optional[int] = None, duration: Optional[float] = None,
            time_limit: Optional[float] = None, env: bool = True,
            reconnect: Optional[float] = RECONNECT_S) -> Lease:
    """Acquire on a connection of its own, closed when the lease is released
    (or the process exits): ``with berth.acquire(cores=4) as lease: ...``.
    The fields are Client.acquire's."""
    fields = _wire.acquire_fields(locals())
    client = Client(path, reconnect=reconnect)
    try:
        return client._acquire(fields, owns_client=True, time_limit=time_limit)
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
