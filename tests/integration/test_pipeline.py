#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Many waiting acquires on one connection (issue 25): after a hello with
"pipeline": true, berthd goes on reading a connection's lines while its
acquires wait, answers each when it is granted (out of order, matched by
id), and serves releases and status on the same connection meanwhile; at
--max-leases waiting it reads no more until one is answered; the
connection's end cancels all of them. Without the hello, today's order:
a waiting acquire holds the lines after it.

usage: BERTHD=build/daemon/berthd test_pipeline.py
"""
import os
import select
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORES_PER_NODE, NODES, Checks, Daemon, status, wait_until  # noqa: E402

ALL = CORES_PER_NODE * len(NODES)
t = Checks()


def readable(c, seconds):
    """Whether a reply comes on the socket within seconds (the tests read
    every line they have asked for first, so nothing waits in c.f)."""
    return bool(select.select([c.s], [], [], seconds)[0])


def fill(d):
    """A holder of every core, and its lease."""
    h = d.client()
    r = h.request("acquire", cores=ALL, may_span_nodes=True, label="holder")
    t.check(r.get("ok"), "a holder takes every core", str(r)[:200])
    return h, r["lease"]


def waiting_of(d, n):
    return wait_until(lambda: len(status(d)["queue"]) == n)


def test_pipelined_acquires(d):
    h, big = fill(d)
    c = d.client()
    hello = c.request("hello", pipeline=True)
    t.check(hello.get("ok") and (hello.get("pipeline") or {}).get("max_waiting") == 1024,
            "hello with pipeline answers its bound (--max-leases, 1024)", str(hello))
    for i in range(3):
        c.send("acquire", id=f"a{i}", cores=1, label=f"piped{i}")
    t.check(waiting_of(d, 3), "three acquires of one connection wait at once", str(status(d)["queue"]))
    # the same connection is served meanwhile
    st = c.request("status", id="s1")
    t.check(st.get("id") == "s1" and st.get("ok") and len(st["queue"]) == 3,
            "a status on that connection is answered while they wait", str(st)[:200])
    r = c.request("release", id="r1", lease="L999999")
    t.check(r.get("id") == "r1" and (r.get("error") or {}).get("code") == "not_found",
            "and a release", str(r))
    # one core frees: one of them is granted, answered by its id
    h.request("release", lease=big)
    got = [c.reply() for _ in range(3)]
    ids = sorted(g.get("id") for g in got)
    t.check(ids == ["a0", "a1", "a2"] and all(g.get("ok") for g in got),
            "each waiting acquire is answered, matched by its id", str(got)[:300])
    # out of order: a request that must wait, then one that fits at once
    leases = [g["lease"] for g in got]
    h2 = d.client()
    free = sorted(n["cores_free"] for n in status(d)["allocation"]["nodes"] if n["cores_free"])
    rs = [h2.request("acquire", cores=f, label="holder2") for f in free]   # best fit: node by node
    t.check(all(r.get("ok") for r in rs) and sum(free) == ALL - 3,
            "the rest of the cores held again", str(rs)[:200])
    c.send("acquire", id="wide", cores=4, label="wide")
    t.check(waiting_of(d, 1), "a 4-core acquire waits")
    c.send("release", id="rel", lease=leases[0])
    c.send("acquire", id="one", cores=1, label="fits")
    first, second = c.reply(), c.reply()
    t.check([first.get("id"), second.get("id")] == ["rel", "one"] and second.get("ok"),
            "a later acquire that fits is answered before the earlier one that waits",
            f"{first} {second}"[:300])
    # the connection's end cancels what it waits for, and its leases end
    c.close()
    t.check(waiting_of(d, 0), "its end cancels its waiting acquire", str(status(d)["queue"]))
    t.check(wait_until(lambda: {x["label"] for x in status(d)["leases"]} == {"holder2"}),
            "and ends its leases", str([x["label"] for x in status(d)["leases"]]))
    h2.close()
    h.close()


def other_process_waits(d, n, tag):
    """A child process that sends n pipelined acquires and waits for its
    parent's word (a line on a pipe) to close them; its pid."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            # the parent's connections are its own to close
            os.closerange(3, rd)
            os.closerange(rd + 1, 4096)
            c = d.client()
            c.request("hello", pipeline=True)
            for i in range(n):
                c.send("acquire", id=f"{tag}{i}", cores=1, label=f"{tag}{i}")
            os.read(rd, 1)
            c.close()
        finally:
            os._exit(0)
    os.close(rd)
    return pid, wr


def test_progress_poll_of_many(d):
    """A process with more waiting than a poll shows gets those nearest the
    head, in order, whatever other processes wait before and after it."""
    h, big = fill(d)
    before, wb = other_process_waits(d, 5, "before")
    t.check(waiting_of(d, 5), "another process's five wait first", str(len(status(d)["queue"])))
    c = d.client()
    c.request("hello", pipeline=True)
    for i in range(100):
        c.send("acquire", id=f"p{i}", cores=1, label=f"p{i}")
    t.check(waiting_of(d, 105), "a hundred of this process wait behind them")
    after, wa = other_process_waits(d, 5, "after")
    t.check(waiting_of(d, 110), "five more of a third process wait after them")
    p = d.client()
    r = p.request("status", pid=os.getpid())
    q = r.get("queue") or []
    t.check([e.get("label") for e in q] == [f"p{i}" for i in range(64)]
            and [e.get("position") for e in q] == list(range(6, 70)),
            "the poll shows this process's 64 nearest the head, in order",
            str([(e.get("position"), e.get("label")) for e in q][:5]) + f"... ({len(q)})")
    t.check((r.get("daemon") or {}).get("waiting") == 110, "and counts the whole queue",
            str(r.get("daemon"))[:200])
    for pid, tag, first in ((before, "before", 1), (after, "after", 106)):
        q = p.request("status", pid=pid).get("queue") or []
        t.check([e.get("label") for e in q] == [f"{tag}{i}" for i in range(5)]
                and [e.get("position") for e in q] == list(range(first, first + 5)),
                f"a poll of the {tag} process shows its five", str(q)[:300])
    os.write(wb, b"x")
    os.waitpid(before, 0)
    t.check(waiting_of(d, 105), "the first process's end takes its five out")
    q = p.request("status", pid=os.getpid()).get("queue") or []
    t.check([e.get("position") for e in q] == list(range(1, 65)),
            "this process's now come first", str([e.get("position") for e in q][:5]))
    q = p.request("status", pid=before).get("queue") or []
    t.check(q == [], "a process with none waiting shows none", str(q)[:200])
    c.close()
    t.check(waiting_of(d, 5), "this process's end takes its hundred out",
            str(len(status(d)["queue"])))
    os.write(wa, b"x")
    os.waitpid(after, 0)
    t.check(waiting_of(d, 0), "and the last five go with theirs")
    p.close()
    h.close()


def test_unpipelined_order(d):
    """Without the hello a waiting acquire holds the connection's later lines."""
    h, big = fill(d)
    c = d.client()
    c.send("acquire", id="w", cores=1)
    t.check(waiting_of(d, 1), "the acquire waits")
    c.send("status", id="s")
    t.check(not readable(c, 0.5), "the status after it is not answered meanwhile")
    h.request("release", lease=big)
    first, second = c.reply(), c.reply()
    t.check([first.get("id"), second.get("id")] == ["w", "s"], "then both, in order",
            f"{first.get('id')} {second.get('id')}")
    c.close()
    h.close()


def test_bound():
    """At --max-leases waiting acquires, berthd reads the connection no
    further until one is answered."""
    d = Daemon(args=["--max-leases", "2"]).start()
    try:
        h, big = fill(d)
        c = d.client()
        hello = c.request("hello", pipeline=True)
        t.check((hello.get("pipeline") or {}).get("max_waiting") == 2, "the bound is --max-leases",
                str(hello))
        c.send("acquire", id="a", cores=1)
        c.send("acquire", id="b", cores=1)
        c.send("status", id="s")
        t.check(waiting_of(d, 2), "two acquires wait")
        t.check(not readable(c, 0.5), "at the bound the next line is not read")
        h.request("release", lease=big)
        ids = [c.reply().get("id") for _ in range(3)]
        t.check(sorted(ids[:2]) == ["a", "b"] and ids[2] == "s",
                "once they are answered the status is", str(ids))
        c.close()
        h.close()
    finally:
        d.stop()


def test_hello_refusals(d):
    c = d.client()
    r = c.request("hello", pipeline="yes")
    t.check((r.get("error") or {}).get("code") == "invalid_request"
            and "pipeline" in r["error"]["message"] and "yes" in r["error"]["message"],
            "a pipeline that is not true or false is refused, naming it", str(r))
    r = c.request("hello")
    t.check(r.get("ok") and "pipeline" not in r, "a hello without it does not pipeline", str(r))
    c.close()


def main():
    t.run_on(Daemon(), (test_pipelined_acquires, test_unpipelined_order, test_hello_refusals,
                        test_progress_poll_of_many))
    t.run_each((test_bound,))
    t.finish()


main()
