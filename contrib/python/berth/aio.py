# SPDX-License-Identifier: MIT
"""The berth client for asyncio: for drivers that run many steps from one
event loop.

    import asyncio, berth.aio

    async def step(c, n):
        async with c.acquire(cores=n, argv=["./model"]) as lease:
            await lease.run(check=True)

    async def main():
        async with await berth.aio.connect() as c:
            await asyncio.gather(*(step(c, n) for n in (1, 2, 4)))
            async for event in c.watch(history=True):
                ...

berthd serves one request at a time per connection and a waiting acquire
holds its connection, so each acquire here has a connection of its own:
the lease's, closed when it is released. Cancelling the task that awaits an
acquire closes that connection, which takes the request out of berthd's
queue and touches no other lease. Status, render and the other requests
share one connection. Each connection is read by one task; if berthd goes
away it connects again (bounded backoff), reclaims its leases by id and
sends the unanswered requests again, as the threaded client does
(PROTOCOL.md "Reconnecting after a restart"); a watch ends with berthd."""
import asyncio
import errno
import subprocess
import threading
import time
import warnings
from dataclasses import dataclass
from types import TracebackType
from typing import (Any, AsyncIterator, Awaitable, Callable, Dict, Generator, List, Mapping,
                    Optional, Sequence, Set, Type, Union)

from . import _step, _wire
from ._wire import PROTOCOL_VERSION, RECONNECT_S, Event, Launch, Placement, socket_path
from .client import status_fields
from .errors import (BerthError, Cancelled, ClientTimeout, ConnectFailed, NotFound,
                     ProtocolError)
from .lease import LeaseBase

__all__ = ["AsyncClient", "AsyncLease", "acquire", "connect", "watch"]


@dataclass
class _Pending:
    op: str
    fields: Dict[str, Any]
    started: float
    future: "asyncio.Future[Dict[str, Any]]"
    resent: int = 0


class _Lost(Exception):
    pass


class _Conn:
    """One connection, read by one task that hands each reply to the future
    of its request and each event to the watch queue."""

    def __init__(self, path: str, origin: str, connect_timeout: Optional[float],
                 reply_timeout: Optional[float], reconnect: float) -> None:
        self.path = path
        self.origin = origin
        self.connect_timeout = connect_timeout
        self.reply_timeout = reply_timeout
        self.reconnect = reconnect
        self.leases: Dict[str, "AsyncLease"] = {}
        self.watch: "Optional[asyncio.Queue[Optional[Event]]]" = None
        self.reconnects = 0
        self._lines = _wire.Lines()
        self._pending: Dict[int, _Pending] = {}
        self._abandoned: Set[int] = set()
        self._ids = _wire.request_ids()
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._task: Optional["asyncio.Task[None]"] = None
        self._closing = asyncio.Event()
        self._dead: Optional[BerthError] = None
        self._reconnecting = False      # requests made meanwhile are sent after it

    async def _connect(self) -> None:
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.path), self.connect_timeout)
        except asyncio.TimeoutError:
            raise ConnectFailed(f"cannot connect to berthd at {self.path}{self.origin} "
                                f"within {self.connect_timeout} s (the connect timeout)"
                                ) from None
        except OSError as e:
            raise _wire.connect_error(self.path, self.origin, errno.errorcode.get(e.errno or 0),
                                      e.strerror or str(e)) from e
        self._lines.clear()

    async def open(self) -> "_Conn":
        await self._connect()
        self._task = asyncio.get_running_loop().create_task(self._serve())
        return self

    def abort(self) -> None:
        """Close at once (its leases end, a waiting request is dropped)."""
        if self._closing.is_set():
            return
        self._closing.set()
        if self._writer is not None:
            self._writer.close()

    async def close(self) -> None:
        self.abort()
        if self._task is not None and self._task is not asyncio.current_task():
            await asyncio.gather(self._task, return_exceptions=True)

    def _write(self, op: str, rid: int, fields: Mapping[str, Any]) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(_wire.encode(op, rid, fields))

    async def call(self, op: str, fields: Mapping[str, Any], waits: bool = False
                   ) -> Dict[str, Any]:
        """A request and its successful reply (see _serve for a restart)."""
        if self._closing.is_set():
            raise ConnectFailed("this client is closed")
        if self._dead is not None:
            raise self._dead
        rid = next(self._ids)
        fut: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._pending[rid] = _Pending(op, dict(fields), time.monotonic(), fut)
        if not self._reconnecting:
            self._write(op, rid, fields)
        limit = None if waits else self.reply_timeout
        try:
            if limit is None:
                return await fut
            return await asyncio.wait_for(asyncio.shield(fut), limit)
        except asyncio.TimeoutError:
            self._give_up(fut)
            raise ClientTimeout(f"no reply to {op} from berthd within {limit} s (the "
                                "client's reply_timeout); the connection and its leases "
                                "are kept") from None
        except asyncio.CancelledError:
            self._give_up(fut)
            raise

    def _give_up(self, fut: "asyncio.Future[Dict[str, Any]]") -> None:
        for rid, p in list(self._pending.items()):
            if p.future is fut:
                del self._pending[rid]
                self._abandoned.add(rid)

    def _dispatch(self, msg: Dict[str, Any]) -> None:
        if _wire.is_event(msg):
            if self.watch is not None:
                self.watch.put_nowait(Event.from_json(msg))
            return
        rid = msg.get("id")
        if not isinstance(rid, int) or rid not in self._pending:
            if rid in self._abandoned:
                self._late(msg)
            return
        p = self._pending.pop(rid)
        if p.future.done():
            return
        try:
            p.future.set_result(_wire.judge(rid, msg))
        except NotFound as e:
            if p.resent and p.op == "release":
                p.future.set_result({"lease": p.fields.get("lease")})
            else:
                p.future.set_exception(e)
        except BerthError as e:
            p.future.set_exception(e)

    def _late(self, msg: Mapping[str, Any]) -> None:
        """A reply whose request gave up: drop it, and end a lease it granted."""
        self._abandoned.discard(msg["id"])
        lid = msg.get("lease")
        if msg.get("ok") is True and isinstance(lid, str) and "placement" in msg \
                and lid not in self.leases:
            rid = next(self._ids)
            self._abandoned.add(rid)
            self._write("release", rid, {"lease": lid})

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            data = await self._reader.read(1 << 16)
        except OSError as e:
            raise _Lost(e.strerror or str(e)) from e
        if not data:
            raise _Lost("berthd closed the connection")
        self._lines.feed(data)

    async def _serve(self) -> None:
        """Read and hand out; on a lost connection, reconnect or fail all."""
        while True:
            try:
                while True:
                    msg = self._lines.next()
                    if msg is None:
                        break
                    self._dispatch(msg)
                await self._read()
                continue
            except _Lost as e:
                why: Union[str, BerthError] = str(e)
            except ProtocolError as e:
                why = e
            if self._closing.is_set():
                self._fail(Cancelled("the client was closed while the request waited for "
                                     "its reply"))
                return
            if isinstance(why, BerthError):
                self._fail(why)
                return
            if self.watch is not None:
                self._fail(Cancelled("berthd went away; a watch ends with it"))
                return
            if not self.reconnect or any(p.op in _wire.NOT_RESENT
                                         or p.resent >= _wire.MAX_RESENDS
                                         for p in self._pending.values()):
                self._fail(ProtocolError(f"berthd closed the connection ({self.path}): {why}"))
                return
            try:
                await self._reconnect(why)
            except BerthError as e:
                self._fail(e)
                return

    def _fail(self, err: BerthError) -> None:
        self._dead = err
        if self._writer is not None:
            self._writer.close()
        for p in self._pending.values():
            if not p.future.done():
                p.future.set_exception(err)
        self._pending.clear()
        if self.watch is not None:
            self.watch.put_nowait(None)

    async def _roundtrip(self, op: str, fields: Mapping[str, Any]) -> Dict[str, Any]:
        """From the reading task itself: send and read until the reply."""
        rid = next(self._ids)
        self._write(op, rid, fields)
        while True:
            msg = self._lines.next()
            if msg is None:
                await self._read()
                continue
            if msg.get("id") == rid and not _wire.is_event(msg):
                return _wire.judge(rid, msg)
            self._dispatch(msg)

    async def _reconnect(self, why: str) -> None:
        self._reconnecting = True
        try:
            await self._connect_again(why)
        finally:
            self._reconnecting = False

    async def _connect_again(self, why: str) -> None:
        if self._writer is not None:
            self._writer.close()
        tries = _wire.Reconnecting(why, self.path, self.reconnect)
        for pause in tries.pauses():
            try:
                await asyncio.wait_for(self._closing.wait(), pause)
                raise Cancelled("the client was closed while it reconnected to berthd")
            except asyncio.TimeoutError:
                pass
            try:
                await self._connect()
            except ConnectFailed as e:
                if tries.refused(e, time.monotonic()):
                    break
                continue
            self._abandoned.clear()
            releasing = {str(p.fields.get("lease")) for p in self._pending.values()
                         if p.op == "release"}
            try:
                for lid, lease in list(self.leases.items()):
                    if lid in releasing:
                        continue
                    try:
                        await self._roundtrip("reclaim", {"lease": lid})
                    except BerthError as e:
                        del self.leases[lid]
                        lease._lose(e.message)
            except _Lost as e:
                tries.last = str(e)
                continue
            for rid in sorted(self._pending):       # under the same ids
                p = self._pending[rid]
                if p.future.done():
                    continue
                p.resent += 1
                self._write(p.op, rid, _wire.resent_fields(p.op, p.fields))
            self.reconnects += 1
            return
        raise tries.failed(list(self.leases))


class AsyncLease(LeaseBase):
    """A grant (see LeaseBase) held on a connection of its own. An async
    context manager: leaving the block releases it."""

    def __init__(self, conn: _Conn, reply: Mapping[str, Any], local: bool,
                 detached: bool, program: Optional[Sequence[str]] = None) -> None:
        super().__init__(reply, local, detached, program)
        self._conn = conn
        self._forget: Optional[Callable[["AsyncLease"], None]] = None

    @property
    def reconnects(self) -> int:
        """How often its connection was made again (berthd restarted)."""
        return self._conn.reconnects

    async def release(self) -> None:
        """End the lease and close its connection (once)."""
        try:
            if not self.released:
                await self._conn.call("release", {"lease": self.id,
                                                  **({"outcome": self.outcome}
                                                     if self.outcome else {})})
        finally:
            self.released = True
            self._conn.leases.pop(self.id, None)
            if self._forget is not None:
                self._forget(self)
            await self._conn.close()

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.release()
        except NotFound:
            pass
        except BerthError:
            if exc is None:
                raise

    async def run(self, argv: Optional[Sequence[str]] = None, *, input: Any = None,
                  capture_output: bool = False, timeout: Optional[float] = None,
                  check: bool = False, env: Optional[Mapping[str, str]] = None,
                  grace: Optional[float] = None, time_limit: Optional[float] = None,
                  **kwargs: Any) -> "subprocess.CompletedProcess[Any]":
        """Run the step and wait, taking what subprocess.run takes (as
        Lease.run, with its grace and time_limit). The step is started and
        waited for by a thread of its own, so that a local step's CPU
        affinity is set on that thread only. Cancelling the task stops the
        step with the stop sequence (SIGTERM to every process, SIGKILL after
        the grace) and CancelledError propagates only once no process of it
        runs."""
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[subprocess.CompletedProcess[Any]]" = loop.create_future()
        procs: List["subprocess.Popen[Any]"] = []
        cancelled = threading.Event()
        done = threading.Event()
        g = _step.grace(grace)

        def started(p: "subprocess.Popen[Any]") -> None:
            procs.append(p)
            if cancelled.is_set():
                _step.stop(p, g)

        def settle(fn: Callable[[Any], None], value: Any) -> None:
            if not fut.done():
                fn(value)

        def target() -> None:
            try:
                r = self._run(argv, input, capture_output, timeout, check, env, kwargs,
                              started, g, time_limit)
            except BaseException as e:  # noqa: BLE001  (handed to the awaiting task)
                done.set()
                try:
                    loop.call_soon_threadsafe(settle, fut.set_exception, e)
                except RuntimeError:
                    pass          # the loop is gone
            else:
                done.set()
                try:
                    loop.call_soon_threadsafe(settle, fut.set_result, r)
                except RuntimeError:
                    pass

        def stop_all() -> None:
            cancelled.set()
            for p in list(procs):
                _step.stop(p, g)
            done.wait()       # the thread has left popen's with block

        threading.Thread(target=target, name=f"berth-run-{self.id}", daemon=True).start()
        try:
            return await fut
        except asyncio.CancelledError:
            # the step goes before the cancel does (a second cancel while
            # it stops is taken after it is gone)
            stopping = loop.run_in_executor(None, stop_all)
            while not stopping.done():
                try:
                    await asyncio.shield(stopping)
                except asyncio.CancelledError:
                    continue
            self.outcome = dict(self.outcome or {}, stopped="cancel")
            raise


class _Acquiring(Awaitable[AsyncLease]):
    """An acquire in the making: await it for the lease, or use it as
    ``async with ... as lease`` to release on leaving the block."""

    def __init__(self, make: Callable[[], Awaitable[AsyncLease]]) -> None:
        self._make = make
        self._lease: Optional[AsyncLease] = None

    def __await__(self) -> Generator[Any, None, AsyncLease]:
        return self._get().__await__()

    async def _get(self) -> AsyncLease:
        return await self._make()

    async def __aenter__(self) -> AsyncLease:
        self._lease = await self._make()
        return self._lease

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._lease is not None:
            await self._lease.__aexit__(exc_type, exc, tb)


async def _acquire_on_own(path: str, origin: str, connect_timeout: Optional[float],
                          reply_timeout: Optional[float], reconnect: float,
                          fields: Mapping[str, Any]) -> AsyncLease:
    req = _wire.acquire_request(fields)
    conn = await _Conn(path, origin, connect_timeout, reply_timeout, reconnect).open()
    try:
        reply = await conn.call("acquire", req, waits=req.get("wait") is not False)
        lease = AsyncLease(conn, reply, bool(req.get("local")), bool(req.get("detach")),
                           req.get("argv"))
    except BaseException:
        conn.abort()      # also what takes a cancelled request out of the queue
        raise
    if not lease.detached:
        conn.leases[lease.id] = lease
    if lease.warning:
        warnings.warn(f"berthd: {lease.warning}", RuntimeWarning, stacklevel=2)
    return lease


class AsyncClient(_wire.Endpoint):
    """berthd for asyncio (see the module's text). ``timeout`` bounds
    connecting; ``reply_timeout`` the wait for any reply but a waiting
    acquire's (ClientTimeout, nothing lost); ``reconnect`` the seconds in
    all to reach a restarted berthd (0: do not). Closing it ends the leases
    acquired through it that are still held."""

    def __init__(self, path: Optional[str] = None, timeout: Optional[float] = None, *,
                 reply_timeout: Optional[float] = None,
                 reconnect: Optional[float] = RECONNECT_S) -> None:
        super().__init__(path, timeout, reply_timeout, reconnect)
        self._conn: Optional[_Conn] = None
        self._held: Set[AsyncLease] = set()
        self._watches: Set[_Conn] = set()
        self.closed = False

    def _new_conn(self) -> _Conn:
        return _Conn(self.path, self._origin, self.connect_timeout, self.reply_timeout,
                     self.reconnect)

    async def open(self) -> "AsyncClient":
        if self._conn is None:
            self._conn = await self._new_conn().open()
        return self

    async def close(self) -> None:
        """Close its connections: leases still held end, waits are dropped."""
        self.closed = True
        conns = ([x._conn for x in self._held] + list(self._watches)
                 + ([self._conn] if self._conn else []))
        self._held.clear()
        self._watches.clear()
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    async def __aenter__(self) -> "AsyncClient":
        return await self.open()

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    async def request(self, op: str, **fields: Any) -> Dict[str, Any]:
        """One request on the shared connection, its successful reply."""
        if self.closed:
            raise ConnectFailed("this client is closed")
        await self.open()
        assert self._conn is not None
        return await self._conn.call(op, fields,
                                     waits=op == "acquire" and fields.get("wait") is not False)

    async def hello(self, version: int = PROTOCOL_VERSION) -> Dict[str, Any]:
        return await self.request("hello", version=version)

    # The keywords are Client.acquire's, written out again for mypy (see
    # there); the operations here mirror Client's as coroutines, their
    # request building and reply reading shared in _wire.
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
                env: bool = True) -> _Acquiring:
        """As Client.acquire, on a connection of its own: ``lease = await
        c.acquire(...)`` or ``async with c.acquire(...) as lease``."""
        fields = _wire.acquire_fields(locals())
        _wire.acquire_request(fields)     # a wrong field fails here, not when awaited

        async def make() -> AsyncLease:
            if self.closed:
                raise ConnectFailed("this client is closed")
            lease = await _acquire_on_own(self.path, self._origin, self.connect_timeout,
                                          self.reply_timeout, self.reconnect, fields)
            lease.time_limit = time_limit
            self._held.add(lease)
            lease._forget = self._held.discard
            return lease
        return _Acquiring(make)

    async def release(self, lease: Union[str, AsyncLease]) -> None:
        """End a lease: an AsyncLease over its own connection; an id of a
        lease acquired through this client likewise, else (a detached or
        orphaned lease) over the shared connection."""
        if isinstance(lease, str):
            mine = [x for x in self._held if x.id == lease]
            if not mine:
                await self.request("release", lease=lease)
                return
            lease = mine[0]
        self._held.discard(lease)
        await lease.release()

    async def render(self, placement: Union[Placement, Mapping[str, Any]],
                     argv: Sequence[str], ntasks: int = 1,
                     cpus_per_task: Optional[int] = None,
                     memory_cap: Optional[int] = None) -> Launch:
        reply = await self.request("render", **_wire.render_request(
            placement, argv, ntasks, cpus_per_task, memory_cap))
        return Launch.from_reply(reply.get("argv"), reply.get("env_delta"))

    async def resources(self, lease: Union[str, LeaseBase, None] = None) -> Dict[str, Any]:
        lid = lease.id if isinstance(lease, LeaseBase) else lease
        return _wire.result(await self.request("resources", lease=lid))

    async def status(self, time_left: bool = False,
                     brief: Optional[int] = None) -> Dict[str, Any]:
        """As Client.status: the ledger (``allocation``, ``leases``,
        ``queue``, ``daemon``); ``brief=N`` the person's view (the job's
        sums in ``allocation["totals"]``, the N busiest nodes, the N oldest
        leases, the queue's first N, with ``brief`` N). A brief that is not
        a whole number from 1 to 1000 raises ValueError, before anything
        is sent."""
        fields = status_fields(time_left, brief)
        return _wire.result(await self.request("status", **fields))

    async def shutdown(self, force: bool = False) -> None:
        await self.request("shutdown", mode="force" if force else "drain")

    def watch(self, history: bool = False) -> AsyncIterator[Event]:
        """Events, on a connection of their own, until berthd closes it or
        the iteration stops (break, aclose(), the task cancelled, close())."""
        conn = self._new_conn()
        self._watches.add(conn)
        return _watch(conn, history, self._watches.discard)


async def _watch(conn: _Conn, history: bool,
                 done: Callable[[_Conn], None]) -> AsyncIterator[Event]:
    try:
        await conn.open()
        conn.watch = asyncio.Queue()
        await conn.call("watch", {"history": True if history else None})
        while True:
            ev = await conn.watch.get()
            if ev is None:        # closed, or berthd went away: a watch ends with it
                if isinstance(conn._dead, (Cancelled, ProtocolError)) or conn._dead is None:
                    return
                raise conn._dead
            yield ev
    finally:
        done(conn)
        await conn.close()


async def connect(path: Optional[str] = None, timeout: Optional[float] = None, *,
                  reply_timeout: Optional[float] = None,
                  reconnect: Optional[float] = RECONNECT_S) -> AsyncClient:
    """An AsyncClient, connected (path as berth.connect finds it)."""
    return await AsyncClient(path, timeout, reply_timeout=reply_timeout,
                             reconnect=reconnect).open()


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
            reconnect: Optional[float] = RECONNECT_S) -> _Acquiring:
    """A lease on a connection of its own: ``async with
    berth.aio.acquire(cores=4) as lease: await lease.run()``."""
    fields = _wire.acquire_fields(locals())
    _wire.acquire_request(fields)
    where = socket_path(path)
    origin = _wire.path_origin(path)

    async def make() -> AsyncLease:
        lease = await _acquire_on_own(where, origin, None, None, reconnect or 0.0, fields)
        lease.time_limit = time_limit
        return lease
    return _Acquiring(make)


def watch(path: Optional[str] = None, history: bool = False) -> AsyncIterator[Event]:
    """Events on a connection of their own (``async for ev in
    berth.aio.watch(): ...``)."""
    return AsyncClient(path).watch(history)

