#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python clients (berth and berth.aio) across a berthd killed with -9
and started again on the same socket and state directory: they connect
again, reclaim their leases by id (held by a connection again, not
orphaned), send a waiting acquire again under its id with "resume" (it
keeps its place and its timeout counts from its first sending), end a
watch, and say when a lease is gone or berthd does not come back (after
the backoff, or at once when its socket is gone: berthd stopped). No core
is granted twice while its holder holds it, counted from the grants the
clients hold.

usage: BERTHD=build/daemon/berthd test_python_restart.py
"""
import asyncio
import os
import sys
import threading
import time
import warnings

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "contrib", "python"))
import berth  # noqa: E402
import berth.aio  # noqa: E402
from harness import CORES_PER_NODE, NODES, Checks, Daemon, held_cores, status, wait_until  # noqa: E402

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def restart(d):
    d.kill9()
    d.start()


def holders(d):
    return {x["lease"]: x.get("holder") for x in status(d)["leases"]}


def queued(d):
    return [q.get("label") for q in status(d)["queue"]]


def disjoint(leases):
    seen = set()
    for lease in leases:
        cores = held_cores({"nodes": lease.placement.nodes, "cores": lease.placement.cores})
        if seen & cores:
            return False
        seen |= cores
    return True


def test_reclaim():
    d = Daemon(args=["--reclaim-grace", "60"]).start()
    try:
        c = berth.connect(d.sock)
        a = c.acquire(cores=4, label="held-a")
        b = c.acquire(cores=8, label="held-b")
        restart(d)
        t.check(holders(d) == {a.id: "orphaned", b.id: "orphaned"},
                "after kill -9 berthd restores both leases, orphaned", str(holders(d)))
        st = c.status()
        t.check(c.reconnects == 1 and holders(d) == {a.id: "connection", b.id: "connection"},
                "the client's next request reconnects and reclaims both by id",
                f"{c.reconnects} {holders(d)} {st['daemon'].get('leases')}")
        restart(d)
        restart(d)
        c.release(a)
        t.check(c.reconnects == 2 and holders(d) == {b.id: "connection"},
                "twice in a row: a release reconnects, reclaims the other and releases",
                f"{c.reconnects} {holders(d)}")
        fresh = berth.connect(d.sock)
        new = fresh.acquire(ntasks=ALL - CORES_PER_NODE, cpus_per_task=1, label="rest")
        t.check(disjoint([b, new]) and new.id not in (a.id, b.id),
                "a later grant is disjoint from the reclaimed lease", f"{new!r} {b!r}")
        fresh.close()
        c.close()
        t.check(wait_until(lambda: not status(d)["leases"]),
                "closing the client ends its reclaimed lease (bound to the new connection)")
    finally:
        d.cleanup()


def test_waiting_resent():
    d = Daemon(args=["--reclaim-grace", "60"]).start()
    try:
        holder = berth.connect(d.sock)
        big = holder.acquire(ntasks=ALL, label="everything")
        got, errs = [], []
        waiter = berth.connect(d.sock)

        def wait_for_it():
            try:
                got.append(waiter.acquire(cores=16, label="waiter"))
            except Exception as e:  # noqa: BLE001
                errs.append(e)
        th = threading.Thread(target=wait_for_it)
        th.start()
        t.check(wait_until(lambda: queued(d) == ["waiter"]), "the request waits", str(queued(d)))
        wait_until(lambda: status(d)["queue"][0]["waited_s"] > 1.0)
        before = status(d)["queue"][0]["waited_s"]
        restart(d)
        t.check(wait_until(lambda: queued(d) == ["waiter"]),
                "after kill -9 the waiting request is sent again and waits on the new berthd",
                str(queued(d)))
        after = status(d)["queue"][0]["waited_s"]
        t.check(after >= before, "keeping its place: its wait counts from its first arrival "
                "(resume)", f"waited {before} s before, {after} s after")
        t.check(not got and not errs, "and the thread still waits", f"{got} {errs}")
        holder.release(big)
        th.join(30)
        t.check(len(got) == 1 and not errs and got[0].label == "waiter",
                "releasing the reclaimed lease grants the resent request", f"{got} {errs}")
        t.check(waiter.reconnects >= 1 and holder.reconnects >= 1,
                "each client reconnected", f"{waiter.reconnects} {holder.reconnects}")
        t.check([x["lease"] for x in status(d)["leases"]] == [got[0].id],
                "leaving exactly that grant held", str(holders(d)))
        # A wait with a timeout of its own: berthd still ends it, counted from the
        # first sending (the resent request carries what is left).
        got[0].release()
        big = holder.acquire(ntasks=ALL, label="everything")
        e = _expect_timeout(d)
        t.check(isinstance(e, berth.WaitTimeout) and "patient" in e.message,
                "a waiting acquire with a timeout, resent after a restart, times out",
                repr(e))
        holder.close()
        waiter.close()
    finally:
        d.cleanup()


def _expect_timeout(d):
    c = berth.connect(d.sock)
    try:
        killer = threading.Thread(target=lambda: (
            wait_until(lambda: queued(d) == ["patient"]), restart(d)))
        killer.start()
        try:
            c.acquire(cores=1, timeout=3, label="patient")
        finally:
            killer.join()
    except berth.BerthError as e:
        return e
    finally:
        c.close()
    return None


def test_watch_ends():
    """A watch ends with berthd (PROTOCOL.md: it is not resent); the
    client's next request reconnects and reclaims its lease."""
    d = Daemon(args=["--reclaim-grace", "60"]).start()
    try:
        seen, ready = [], threading.Event()
        w = berth.connect(d.sock)
        lease = w.acquire(cores=1, label="watcher's")

        def run():
            for ev in w.watch():
                ready.set()
                seen.append((ev.kind, ev.label))
        th = threading.Thread(target=run)
        th.start()
        # the watch is registered once it sees an event: until then a grant
        # may come before it (on a loaded machine it did)
        deadline = time.monotonic() + 30
        while not ready.is_set() and time.monotonic() < deadline:
            with berth.acquire(d.sock, cores=1, label="ping"):
                pass
            ready.wait(0.05)
        with berth.acquire(d.sock, cores=1, label="before"):
            pass
        wait_until(lambda: ("granted", "before") in seen)
        restart(d)
        th.join(30)
        t.check(not th.is_alive() and ("granted", "before") in seen,
                "the watch saw the grant and ends quietly when berthd goes away", str(seen))
        st = w.status()
        t.check(w.reconnects == 1 and [x["lease"] for x in st["leases"]] == [lease.id]
                and holders(d) == {lease.id: "connection"},
                "the watching client's next request reconnects and reclaims its lease",
                f"{w.reconnects} {holders(d)}")
        w.close()
    finally:
        d.cleanup()


def test_lost_and_gone():
    d = Daemon(args=["--reclaim-grace", "60"]).start()
    try:
        c = berth.connect(d.sock, reconnect=30)
        lease = c.acquire(cores=2, label="forgotten")
        d.kill9()
        import shutil
        shutil.rmtree(d.state)          # a new berthd that never granted it
        d.start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c.status()
        t.check(lease.lost and "not_found" not in lease.lost and lease.released
                and any(lease.id in str(w.message) for w in caught),
                "a lease the new berthd does not know is lost, with a RuntimeWarning",
                f"{lease.lost!r} {[str(w.message) for w in caught]}")
        lease.release()         # nothing to do, no error
        c.close()
        c = berth.connect(d.sock, reconnect=1)
        lease = c.acquire(cores=2, label="stranded")
        d.kill9()
        e = None
        try:
            c.status()
        except berth.ConnectFailed as ex:
            e = ex
        t.check(e is not None and "could not be reached again" in e.message
                and lease.id in e.message,
                "berthd gone for good: ConnectFailed after the backoff, naming the lease",
                repr(e))
        c.close()
        d.start()
        c = berth.connect(d.sock)           # the default: 60 s of tries
        lease = c.acquire(cores=2, label="stopped")
        berth.connect(d.sock).shutdown(force=True)   # berthd removes its socket
        d.proc.wait(30)
        e = None
        try:
            c.status()
        except berth.ConnectFailed as ex:
            e = ex
        t.check(e is not None and "has been gone" in e.message and lease.id in e.message,
                "berthd stopped on purpose (socket removed): ConnectFailed without waiting "
                "out the backoff", repr(e))
        c.close()
    finally:
        d.cleanup()


def test_async():
    d = Daemon(args=["--reclaim-grace", "60"]).start()

    async def main():
        c = await berth.aio.connect(d.sock)
        lease = await c.acquire(cores=4, label="aio-held")
        restart(d)
        ok = await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: lease.reconnects == 1
                                     and holders(d) == {lease.id: "connection"}, 30))
        t.check(ok and lease.reconnects == 1,
                "asyncio: the lease's connection reconnects and reclaims on its own, "
                "with no request made", f"{holders(d)} {lease.reconnects}")
        st = await c.status()
        t.check(len(st["leases"]) == 1, "and the shared connection serves again")
        big = await c.acquire(ntasks=ALL - CORES_PER_NODE, cpus_per_task=1, label="aio-rest")
        rest = await c.acquire(cores=CORES_PER_NODE - 4, label="aio-node0")
        waiting = asyncio.ensure_future(c.acquire(cores=8, label="aio-waiter"))
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: queued(d) == ["aio-waiter"]))
        restart(d)
        ok = await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: queued(d) == ["aio-waiter"]
                                     and set(holders(d).values()) == {"connection"}, 30))
        t.check(ok and not waiting.done(),
                "asyncio: a waiting acquire is sent again and waits on the new berthd",
                f"{queued(d)} {holders(d)}")
        t.check(disjoint([lease, big, rest]), "the reclaimed leases are disjoint")
        await rest.release()
        await big.release()
        got = await asyncio.wait_for(waiting, 30)
        t.check(got.label == "aio-waiter" and disjoint([lease, got]),
                "and is granted when room is made, beside the reclaimed lease", repr(got))
        await got.release()
        await lease.release()
        await c.close()
        t.check(wait_until(lambda: not status(d)["leases"]), "nothing left held")

    try:
        asyncio.run(main())
    finally:
        d.cleanup()


t.run_each([test_reclaim, test_waiting_resent, test_watch_ends, test_lost_and_gone,
            test_async])
t.finish()
