#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""berth.aio against a real berthd: many steps from one event loop (each
acquire on a connection of its own, so a waiting one holds up no release),
async with for leases, lease.run with subprocess.run's arguments, status,
render, watch as an async iterator stopped by break, by cancelling its
task and by close(); cancelling a waiting acquire takes it out of the queue
and leaves the other leases held; reply_timeout is not an error that ends
anything; a misspelt field fails at the call.

usage: BERTHD=build/daemon/berthd test_python_aio.py
"""
import asyncio
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "contrib", "python"))
import berth  # noqa: E402
import berth.aio  # noqa: E402
from harness import CORES_PER_NODE, NODES, Checks, Daemon, held_cores, status, wait_until, with_srun  # noqa: E402

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


async def poll(pred, timeout=20.0):
    """wait_until off the event loop's thread (status() is blocking)."""
    return await asyncio.get_running_loop().run_in_executor(None, lambda: wait_until(pred,
                                                                                      timeout))


def queued(d):
    return [q.get("label") for q in status(d)["queue"]]


async def many_steps(d):
    """12 steps of 1 core on a 2-core-wide window from one loop."""
    async with await berth.aio.connect(d.sock) as c:
        fill = await c.acquire(ntasks=ALL - CORES_PER_NODE, cpus_per_task=1, label="fill")
        t.check(isinstance(fill, berth.aio.AsyncLease)
                and fill.placement.ncores == ALL - CORES_PER_NODE,
                "await c.acquire() is the lease", repr(fill))
        fill2 = await c.acquire(cores=CORES_PER_NODE - 2, label="fill2")
        running, peak, done = 0, 0, []

        async def step(i):
            nonlocal running, peak
            async with c.acquire(cores=1, label=f"step{i}",
                                 argv=[sys.executable, "-c", "pass"]) as lease:
                running += 1
                peak = max(peak, running)
                await asyncio.sleep(0.05)
                done.append(lease.placement.ncores)
                running -= 1
        await asyncio.wait_for(asyncio.gather(*(step(i) for i in range(12))), 120)
        t.check(len(done) == 12 and peak <= 2,
                "12 steps from one loop ran, at most 2 at once on the 2 free cores",
                f"{len(done)} done, peak {peak}")
        st = await c.status()
        t.check(sorted(x["lease"] for x in st["leases"]) == sorted([fill.id, fill2.id]),
                "every step's lease was released on leaving its block", str(st["leases"]))
        await c.release(fill2.id)
        launch = await c.render(berth.Placement([NODES[1]], [[0, 1]]), ["./a.out"], ntasks=2)
        t.check(launch.argv[0] == "srun" and launch.argv[-1] == "./a.out",
                "render() on the shared connection", str(launch))
        await fill.release()
        t.check(fill.released and not status(d)["leases"], "release() ends it")


async def cancel_waiting(d):
    c = await berth.aio.connect(d.sock)
    held = await c.acquire(ntasks=ALL, cpus_per_task=1, label="everything")
    task = asyncio.ensure_future(c.acquire(cores=4, label="never"))
    t.check(await poll(lambda: queued(d) == ["never"]), "the acquire waits in the queue")
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    t.check(await poll(lambda: queued(d) == []),
            "cancelling its task takes the request out of berthd's queue", str(queued(d)))
    t.check([x["lease"] for x in status(d)["leases"]] == [held.id],
            "and leaves the other lease held")
    # A wait with a timeout of its own.
    try:
        await c.acquire(cores=1, timeout=0.3, label="patient")
        e = None
    except berth.WaitTimeout as ex:
        e = ex
    t.check(e is not None and "patient" in e.message, "a timeout of its own: WaitTimeout",
            repr(e))
    # reply_timeout: berthd stopped, a status goes unanswered; nothing is lost.
    slow = await berth.aio.connect(d.sock, reply_timeout=0.5)
    d.proc.send_signal(signal.SIGSTOP)
    try:
        try:
            await slow.status()
            e = None
        except berth.ClientTimeout as ex:
            e = ex
    finally:
        d.proc.send_signal(signal.SIGCONT)
    t.check(isinstance(e, berth.ClientTimeout) and "kept" in e.message,
            "no reply within reply_timeout: ClientTimeout", repr(e))
    st = await slow.status()
    t.check([x["lease"] for x in st["leases"]] == [held.id],
            "the late reply is dropped, the next one answers, the lease is still held",
            str(st.get("leases")))
    await slow.close()
    await c.close()
    t.check(await poll(lambda: not status(d)["leases"]), "close() ends what it held")


async def run_like_subprocess(d):
    c = await berth.aio.connect(d.sock)
    async with c.acquire(local=True, cores=1, label="probe",
                         argv=[sys.executable, "-c",
                               "import os, sys; d = sys.stdin.read(); "
                               "print(d.upper(), sorted(os.sched_getaffinity(0)), "
                               "os.environ['BERTH_LEASE'])"]) as lease:
        p = await lease.run(input="abc", capture_output=True, text=True, check=True)
        t.check(p.stdout.split()[0] == "ABC" and str(sorted(lease.cpus())).replace(" ", "")
                in p.stdout.replace(" ", "") and lease.id in p.stdout,
                "await lease.run(input=, capture_output=, text=): the step's output, under its "
                "placed affinity, with BERTH_LEASE", p.stdout)
        try:
            await lease.run([sys.executable, "-c", "import sys; sys.exit(3)"], check=True)
            e = None
        except subprocess.CalledProcessError as ex:
            e = ex
        t.check(e is not None and e.returncode == 3, "check=True: CalledProcessError", repr(e))
        pidfile = os.path.join(d.dir, "step.pid")
        task = asyncio.ensure_future(lease.run([sys.executable, "-c",
                                                "import os, time; open(%r, 'w').write("
                                                "str(os.getpid())); time.sleep(60)" % pidfile]))
        await poll(lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0)
        with open(pidfile) as f:
            pid = int(f.read())
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

        def gone():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    return f.read().split(") ")[1].split()[0] == "Z"
            except OSError:
                return True
        t.check(task.cancelled() and await poll(gone),
                "cancelling a running step's task kills the step", str(pid))
    await c.close()


async def watch(d):
    c = await berth.aio.connect(d.sock)
    seen = []

    async def follow():
        async for ev in c.watch():
            seen.append((ev.kind, ev.label))
            if ev.kind == "released":
                break
    task = asyncio.ensure_future(follow())
    await poll(lambda: status(d)["daemon"]["connections"] >= 2)
    async with c.acquire(cores=2, label="watched"):
        pass
    await asyncio.wait_for(task, 20)
    t.check(("granted", "watched") in seen and ("released", "watched") in seen,
            "async for over watch() sees the grant and the release, break ends it", str(seen))
    hist = []
    async for ev in berth.aio.watch(d.sock, history=True):
        if ev.kind == "granted":
            hist.append((ev.kind, ev.label))
        if len(hist) >= 2:
            break
    t.check(hist == [("granted", "fill"), ("granted", "fill2")],
            "watch(history=True) replays the log from berthd's start", str(hist))
    # stopped by cancelling its task, and by close() from another task
    it = asyncio.ensure_future(follow())
    await asyncio.sleep(0.2)
    it.cancel()
    try:
        await it
    except asyncio.CancelledError:
        pass
    t.check(it.cancelled(), "cancelling the task stops a watch")
    await c.close()
    w = berth.aio.AsyncClient(d.sock)
    events = []

    async def follow_w():
        async for ev in w.watch():
            events.append(ev)
    task = asyncio.ensure_future(follow_w())
    await poll(lambda: status(d)["daemon"]["connections"] >= 2)
    await asyncio.sleep(0.1)
    await w.close()
    await asyncio.wait_for(task, 20)
    t.check(task.done() and task.exception() is None,
            "close() from another task ends a watch quietly", repr(task))
    t.check(await poll(lambda: status(d)["daemon"]["connections"] == 1),
            "and closes its connection (the one left is the test's own)",
            str(status(d)["daemon"]["connections"]))


async def brief_status(d):
    """await c.status(brief=N): the person's view on the shared connection;
    a brief berthd would refuse is a ValueError before anything is sent."""
    c = await berth.aio.connect(d.sock)
    try:
        held = [await c.acquire(cores=n, label=f"brief{n}") for n in (4, 8, 16)]
        full = await c.status()
        st = await c.status(brief=2)
        t.check(st.get("brief") == 2 and set(st) >= {"allocation", "leases", "queue", "daemon"},
                "await status(brief=2) answers the brief view, saying brief 2", str(sorted(st)))
        ids = [x["lease"] for x in st["leases"]]
        t.check(len(full["leases"]) == 3 and len(ids) <= 2
                and ids == [x.id for x in held[:2]],
                "with at most 2 leases (the oldest) while 3 are held",
                f"{ids} of {[x['lease'] for x in full['leases']]}")
        t.check(st["daemon"]["leases"] == 3 == full["daemon"]["leases"],
                "daemon.leases is the whole count", str(st["daemon"]))
        used = sum(n["cores_used"] for n in full["allocation"]["nodes"])
        tot = st["allocation"].get("totals", {})
        t.check(used == 28 and tot.get("cores_used") == used,
                "totals.cores_used is the sum of the whole status's nodes' cores_used",
                f"{tot.get('cores_used')} vs {used}")
        sent = []
        request = c.request

        async def counted(op, **fields):
            sent.append(op)
            return await request(op, **fields)
        c.request = counted
        for bad in (0, True):
            e = None
            try:
                await c.status(brief=bad)
            except (ValueError, berth.BerthError) as ex:   # berthd's refusal: sent
                e = ex
            t.check(isinstance(e, ValueError) and f"brief {bad!r}" in str(e) and not sent,
                    f"status(brief={bad!r}): ValueError naming it, nothing sent",
                    f"{e!r}, sent {sent}")
        del c.request
        t.check((await c.status(brief=1))["brief"] == 1, "and the connection serves on")
    finally:
        await c.close()
    t.check(await poll(lambda: not status(d)["leases"]), "nothing left held")


async def typed(d):
    e = None
    try:
        berth.aio.acquire(d.sock, **{"corez": 3})
    except TypeError as ex:
        e = ex
    t.check(e is not None and "corez" in str(e), "a misspelt field: TypeError at the call",
            repr(e))
    async with berth.aio.acquire(d.sock, cores=2, label="own") as lease:
        t.check(any(x["lease"] == lease.id for x in status(d)["leases"]),
                "berth.aio.acquire() holds a lease on a connection of its own")
    t.check(await poll(lambda: not status(d)["leases"]), "and ends it on leaving the block")


def main():
    d = with_srun(Daemon()).start()
    try:
        for fn in (many_steps, cancel_waiting, watch, brief_status, typed):
            try:
                asyncio.run(fn(d))
            except Exception as e:  # noqa: BLE001
                import traceback
                traceback.print_exc()
                t.check(False, f"{fn.__name__} raised no exception", repr(e))
        t.check(d.alive(), "berthd is still running", d.stderr())
    finally:
        d.cleanup()
    local = Daemon(env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"},
                   machine=None).start()
    try:
        asyncio.run(run_like_subprocess(local))
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        t.check(False, "run_like_subprocess raised no exception", repr(e))
    finally:
        local.cleanup()


main()
t.finish()
