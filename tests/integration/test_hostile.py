#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile input to a real berthd (issue 10):

- every op with every one of its fields given a value of each wrong JSON
  type, generated from a table of ops and field types: each is refused with
  invalid_request, the client's id and the field's name, and nothing changes;
- absurd numbers: 2^63 cores, negative and overflowing memory, products of
  fields past any integer, huge timeouts;
- deeply nested JSON, invalid UTF-8, NUL bytes raw and escaped, duplicate
  keys, trailing garbage, over-long arrays and names;
- socket path attacks: a symbolic link at the socket path and at the socket
  directory, a socket directory of another owner or open to others, a file
  in the socket's place; berthd refuses to start and touches nothing.

(Another uid is refused in test_protocol.py.)

usage: BERTHD=build/daemon/berthd test_hostile.py
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BERTHD, CORES_PER_NODE, NODES, Checks, Daemon, slurm_env, status  # noqa: E402

t = Checks()

# The fields of each op (PROTOCOL.md) by type, and a valid request to add
# each wrong value to.
POS, NONNEG, MEM, BOOL, NAME, SECS, ARGV, PRIO, PID, OBJ, MODE = (
    "positive integer", "non-negative integer", "memory", "boolean", "name", "seconds",
    "argv", "priority", "pid", "object", "mode")
OPS = {
    "hello": ({}, {"version": POS}),
    "acquire": ({"cores": 1, "wait": False}, {
        "ntasks": POS, "min_tasks": POS, "cpus_per_task": POS, "min_cpus_per_task": POS,
        "cores": POS, "min_cores": POS, "gpus": NONNEG, "min_gpus": NONNEG,
        "gpus_per_task": NONNEG, "min_gpus_per_task": NONNEG, "memory": MEM,
        "min_memory": MEM, "may_span_nodes": BOOL, "local": BOOL, "label": NAME,
        "priority": PRIO, "timeout": SECS, "wait": BOOL, "argv": ARGV, "detach": BOOL,
        "ttl": SECS, "owner_pid": PID, "env": BOOL}),
    "release": ({"lease": "L999999"}, {"lease": NAME}),
    "render": ({"placement": {"nodes": [NODES[1]], "cores": [[0, 1]], "gpus": 0}, "argv": ["./a"]},
               {"placement": OBJ, "ntasks": POS, "cpus_per_task": POS, "memory_cap": MEM,
                "argv": ARGV}),
    "resources": ({}, {"lease": NAME}),
    "status": ({}, {}),
    "watch": ({}, {"history": BOOL}),
    "shutdown": ({"mode": "drain"}, {"mode": MODE}),
}
REQUIRED = {("release", "lease"), ("render", "placement"), ("render", "argv")}

# One value of each JSON type, and which field types it is right for.
SAMPLES = [
    (7, {POS, NONNEG, MEM, PRIO, PID, SECS}),
    (0, {NONNEG, PRIO, SECS}),
    (-3, {PRIO}),
    (2.5, {SECS}),
    ("text", {NAME}),
    ("", set()),
    (True, {BOOL}),
    (False, {BOOL}),
    ([], set()),
    (["x"], {ARGV}),
    ([1, 2], set()),
    ({}, set()),
    ({"a": 1}, set()),
    ("force", {NAME, MODE}),
]


def wrong_type_cases():
    """(op, field, value, request) for every value of a type the field is
    not."""
    n = 0
    for op, (base, fields) in OPS.items():
        for field, kind in fields.items():
            for value, right in SAMPLES:
                if kind in right:
                    continue
                if op == "shutdown" and value == "drain":
                    continue
                req = {"op": op, "id": f"{op}.{field}.{n}"}
                req.update(base)
                req[field] = value
                n += 1
                yield op, field, value, req
            if (op, field) in REQUIRED:
                req = {"op": op, "id": f"{op}.{field}.null"}
                req.update(base)
                req[field] = None
                yield op, field, None, req


def test_wrong_types(d):
    c = d.client()
    before = status(d)
    bad, count = [], 0
    for op, field, value, req in wrong_type_cases():
        count += 1
        r = c.request(op, **{k: v for k, v in req.items() if k != "op"})
        err = r.get("error", {})
        if not (r.get("ok") is False and err.get("code") == "invalid_request" and r.get("id") == req["id"]
                and field in err.get("message", "")):
            bad.append((json.dumps(req), r))
    t.check(not bad, f"{count} requests with a field of the wrong type are each refused naming the field",
            "; ".join(f"{q} -> {r}" for q, r in bad[:4]))
    # and the common members
    cases = [
        ({"op": 42, "id": 1}, 1, "op"), ({"op": None, "id": 2}, 2, "op"), ({"op": ["status"], "id": 3}, 3, "op"),
        ({"op": "status", "id": 1.5}, None, "id"), ({"op": "status", "id": True}, None, "id"),
        ({"op": "status", "id": [1]}, None, "id"), ({"op": "status", "id": {"a": 1}}, None, "id"),
        ({"op": "status", "id": None}, None, "id"), ({"op": "status", "id": "x" * 256}, None, "id"),
        ({"op": "status"}, None, "id"), ({"id": 4}, 4, "op"),
    ]
    for req, rid, word in cases:
        c.send_raw((json.dumps(req) + "\n").encode())
        r = c.reply()
        t.check(r.get("ok") is False and r.get("error", {}).get("code") == "invalid_request"
                and r.get("id") == rid and word in r["error"]["message"],
                f"{json.dumps(req)[:60]} is refused with id {rid!r}, naming '{word}'", str(r)[:200])
    after = status(d)
    t.check(after["leases"] == before["leases"] and after["allocation"]["totals"] == before["allocation"]["totals"]
            and not after["daemon"]["draining"], "none of them changed anything")
    c.close()
    print(f"wrong types: {count} generated requests refused", flush=True)


def test_absurd_numbers(d):
    c = d.client()
    big = 2 ** 63
    cases = [
        ({"cores": big - 1}, "invalid_request"), ({"cores": big}, "invalid_request"),
        ({"cores": 2 ** 64}, "invalid_request"), ({"cores": -big}, "invalid_request"),
        ({"cores": 0}, "invalid_request"), ({"cores": 1048577}, "invalid_request"),
        ({"cores": 1e308}, "invalid_request"), ({"cores": 1.0}, "invalid_request"),
        ({"memory": -1}, "invalid_request"), ({"memory": 0}, "invalid_request"),
        ({"memory": 2 ** 40 + 1}, "invalid_request"), ({"memory": big - 1}, "invalid_request"),
        ({"memory": -big}, "invalid_request"), ({"min_memory": 2 ** 62}, "invalid_request"),
        ({"priority": 2 ** 31}, "invalid_request"), ({"priority": -(2 ** 31) - 1}, "invalid_request"),
        ({"timeout": -1}, "invalid_request"), ({"timeout": 1e300}, "invalid_request"),
        ({"gpus": big}, "invalid_request"), ({"gpus_per_task": 2 ** 31}, "invalid_request"),
        # within every bound, impossible together: a product past 2^31
        ({"ntasks": 1048576, "cpus_per_task": 1048576}, "unsatisfiable"),
        ({"ntasks": 1048576, "cpus_per_task": 1048576, "min_tasks": 1048576,
          "gpus_per_task": 1048576}, "unsatisfiable"),
        ({"ntasks": 1048576, "gpus_per_task": 1048576}, "unsatisfiable"),
        ({"cores": 1048576, "memory": 2 ** 40}, "unsatisfiable"),
        ({"ntasks": 1048576, "min_tasks": 1, "cpus_per_task": 1048576, "min_cpus_per_task": 1,
          "memory": 2 ** 40, "min_memory": 1}, None),
        ({"cores": 1, "timeout": 31622400, "priority": 1048576}, None),
    ]
    bad = []
    for fields, code in cases:
        r = c.request("acquire", wait=False, **fields)
        if code is None:
            ok = r.get("ok") or r.get("error", {}).get("code") in ("busy", "unsatisfiable")
        else:
            ok = r.get("ok") is False and r.get("error", {}).get("code") == code
        if r.get("ok"):
            c.request("release", lease=r["lease"])
        if not ok:
            bad.append((fields, r))
    t.check(not bad, f"{len(cases)} acquires with absurd numbers get the right refusal", str(bad[:3]))
    for v in (0, -1, 2 ** 31, 2 ** 63, 2):
        r = c.request("hello", version=v)
        t.check(r.get("ok") is False and r["error"]["code"] in ("invalid_request", "unsupported_version"),
                f"hello version {v} is refused", str(r))
    r = c.request("render", placement={"nodes": [NODES[1]], "cores": [[2 ** 40]], "gpus": 0}, argv=["a"])
    t.check(r.get("error", {}).get("code") == "invalid_request", "a render with a core id of 2^40 is refused",
            str(r))
    r = c.request("render", placement={"nodes": [NODES[1]], "cores": [[0]], "gpus": 2 ** 31,
                                       "gpu_ids": [0]}, argv=["a"])
    t.check(r.get("error", {}).get("code") == "invalid_request", "a render with 2^31 GPUs is refused", str(r))
    r = c.request("render", placement={"nodes": [NODES[1]], "cores": [list(range(128))]},
                  ntasks=1048576, cpus_per_task=1048576, argv=["a"])
    t.check(r.get("ok") is False, "a render of 2^40 task cores is refused", str(r)[:200])
    t.check(status(d)["allocation"]["totals"]["cores_used"] == 0, "nothing is held after them")
    c.close()


def raw_cases():
    deep_arr = b"[" * 30000 + b"]" * 30000
    deep_obj = b'{"a":' * 10000 + b"1" + b"}" * 10000
    nested_field = b'{"op":"status","id":1,"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    return [
        (deep_arr, None, "nested arrays 30,000 deep"),
        (deep_obj, None, "nested objects 10,000 deep"),
        (nested_field, None, "a deeply nested unknown field (past the parser's depth)"),
        (b'{"op":"acquire","id":2,"cores":1,"label":"\xff\xfe"}', None, "invalid UTF-8 in a label"),
        (b'{"op":"acquire","id":3,"cores":1,"label":"\xc0\xaf"}', None, "an overlong UTF-8 encoding"),
        (b'{"op":"acquire","id":4,"cores":1,"label":"\xed\xa0\x80"}', None, "a UTF-8 surrogate"),
        (b'{"op":"acquire","id":5,"cores":1,"label":"\\ud800"}', None, "a lone escaped surrogate"),
        (b'{"op":"acquire","id":6,"cores":1,"\xff":1}', None, "invalid UTF-8 in a key"),
        (b'{"op":"status","id":7}\x00', None, "a raw NUL after the object"),
        (b'{"op":"sta\x00tus","id":8}', None, "a raw NUL inside a string"),
        (b'{"op":"acquire","id":9,"cores":1,"label":"a\\u0000b"}', None, "an escaped NUL in a label"),
        (b'{"op":"status","id":10,"a\\u0000b":1}', None, "an escaped NUL in a key"),
        (b'{"op":"status\\u0000","id":11}', None, "an escaped NUL in the op"),
        (b'{"op":"status","id":12,"id":13}', None, "a duplicate id"),
        (b'{"op":"status","op":"shutdown","id":14}', None, "a duplicate op"),
        (b'{"op":"acquire","id":15,"cores":1,"cores":2}', None, "a duplicate field"),
        (b'{"op":"status","id":16} x', None, "garbage after the object"),
        (b'{"op":"status","id":17}{"op":"status","id":18}', None, "two objects on one line"),
        (b'{"op":"acquire","id":19,"argv":[' + b'"a",' * 4096 + b'"b"]}', 19, "argv of 4097 items"),
        (b'{"op":"acquire","id":20,"cores":1,"label":"' + b"x" * 256 + b'"}', 20, "a 256-byte label"),
        (b'{"op":"acquire","id":21,"cores":1,"label":"a\\nb"}', 21, "a label with a newline"),
        (b'{"op":"acquire","id":22,"cores":1,"label":"a\x7fb"}', 22, "a label with DEL"),
        (b'{"op":"release","id":23,"lease":"L18446744073709551617"}', 23, "a lease id past 2^64"),
        (b'{"op":"release","id":24,"lease":"L-1"}', 24, "a negative lease id"),
        (b'\xef\xbb\xbf{"op":"status","id":25}', None, "a byte-order mark"),
        # found by fuzzing: messages that quote invalid or cut UTF-8 once
        # could not be encoded, and the connection was closed
        (b'{"argv": ["./\\\xcf\xa2\x00\xf0`\x00\x00"M "0E]}', None, "a bad escape before a cut UTF-8 sequence"),
        (('{"op":"' + "\u00e9" * 30 + '","id":26}').encode(), 26, "an unknown op cut inside a character"),
        (b"null", None, "null"), (b"42", None, "a number"), (b'"status"', None, "a string"),
        (b"{", None, "an unterminated object"), (b"   ", None, "blanks"),
    ]


def test_raw(d):
    c = d.client()
    held = c.request("acquire", cores=3, label="keeper")
    for line, rid, what in raw_cases():
        c.send_raw(line + b"\n")
        r = c.reply()
        code = r.get("error", {}).get("code")
        ok = r.get("ok") is False and code in ("invalid_request", "not_found") and r.get("id") == rid
        t.check(ok, f"{what} is refused with id {rid!r}", str(r)[:200])
    s = c.request("status")
    t.check(s.get("ok") and [x["lease"] for x in s["leases"]] == [held["lease"]] and not s["daemon"]["draining"],
            "the connection serves on; nothing was granted or shut down", str(s.get("leases"))[:200])
    c.close()


# ---- socket path attacks ----

def start_fails(tmp, sock, env=None, extra=()):
    """Run berthd expecting it to refuse to start; returns (code, stderr)."""
    cmd = [BERTHD, "--foreground", "--machine", "pm-cpu", "--state-dir", os.path.join(tmp, "state")]
    if sock:
        cmd += ["--socket", sock]
    p = subprocess.run(cmd + list(extra), env=env or slurm_env(tmp), capture_output=True, text=True,
                       timeout=20)
    return p.returncode, p.stderr


def test_socket_paths():
    tmp = tempfile.mkdtemp(prefix="berthd-hostile-")
    os.chmod(tmp, 0o700)
    try:
        # a symbolic link where the socket goes, pointing at a file of ours
        sdir = os.path.join(tmp, "d1")
        os.mkdir(sdir, 0o700)
        target = os.path.join(tmp, "precious")
        with open(target, "w") as f:
            f.write("keep me\n")
        os.symlink(target, os.path.join(sdir, "s.sock"))
        code, err = start_fails(tmp, os.path.join(sdir, "s.sock"))
        t.check(code != 0 and "not a socket" in err, "a symlink at the socket path is refused", err[-300:])
        t.check(open(target).read() == "keep me\n" and os.path.islink(os.path.join(sdir, "s.sock")),
                "and neither the link nor its target is touched")
        # a symbolic link to a directory, as the socket directory
        real = os.path.join(tmp, "real")
        os.mkdir(real, 0o700)
        os.symlink(real, os.path.join(tmp, "link"))
        code, err = start_fails(tmp, os.path.join(tmp, "link", "s.sock"))
        t.check(code != 0 and "symbolic link" in err, "a symlinked socket directory is refused", err[-300:])
        t.check(os.listdir(real) == [], "and nothing is created behind it")
        # the same through the default path ($XDG_RUNTIME_DIR/berth)
        xdg = os.path.join(tmp, "xdg")
        os.mkdir(xdg, 0o700)
        os.symlink(real, os.path.join(xdg, "berth"))
        env = slurm_env(tmp, extra={"XDG_RUNTIME_DIR": xdg})
        code, err = start_fails(tmp, None, env=env)
        t.check(code != 0 and "symbolic link" in err, "a symlinked default socket directory is refused",
                err[-300:])
        # a directory open to others
        wide = os.path.join(tmp, "wide")
        os.mkdir(wide)
        os.chmod(wide, 0o755)
        code, err = start_fails(tmp, os.path.join(wide, "s.sock"))
        t.check(code != 0 and "mode 0755" in err, "a socket directory open to others is refused", err[-300:])
        # a file (not a socket) in the socket's place
        fdir = os.path.join(tmp, "d2")
        os.mkdir(fdir, 0o700)
        with open(os.path.join(fdir, "s.sock"), "w") as f:
            f.write("data\n")
        code, err = start_fails(tmp, os.path.join(fdir, "s.sock"))
        t.check(code != 0 and "not a socket" in err and open(os.path.join(fdir, "s.sock")).read() == "data\n",
                "a file at the socket path is refused and kept", err[-300:])
        # a directory of another owner
        if os.getuid() == 0:
            other = os.path.join(tmp, "other")
            os.mkdir(other, 0o700)
            os.chown(other, 65534, 65534)
            code, err = start_fails(tmp, os.path.join(other, "s.sock"))
            t.check(code != 0 and "belongs to uid 65534" in err, "a socket directory of another user is refused",
                    err[-300:])
            st = os.path.join(tmp, "st-other")
            os.mkdir(st, 0o700)
            os.chown(st, 65534, 65534)
            ok_dir = os.path.join(tmp, "ok")
            os.mkdir(ok_dir, 0o700)
            p = subprocess.run([BERTHD, "--foreground", "--machine", "pm-cpu", "--socket",
                                os.path.join(ok_dir, "s.sock"), "--state-dir", st],
                               env=slurm_env(tmp), capture_output=True, text=True, timeout=20)
            t.check(p.returncode != 0 and "belongs to uid 65534" in p.stderr,
                    "a state directory of another user is refused", p.stderr[-300:])
        else:
            print("skipped: the other-owner checks need root (to chown)")
        # a live berthd's socket is not taken over
        d = Daemon()
        try:
            d.start()
            code, err = start_fails(tmp, d.sock)
            named = f"another berthd (pid {d.proc.pid}) holds the socket {d.sock}" if not d.wrapper \
                else "another berthd (pid "
            t.check(code != 0 and named in err, "a second berthd refuses a live socket, naming the first's pid",
                    err[-300:])
            t.check(status(d).get("ok"), "and the first one still serves")
        finally:
            d.cleanup()
    finally:
        subprocess.run(["rm", "-rf", tmp])


def main():
    t.run_on(Daemon(), (test_wrong_types, test_absurd_numbers, test_raw))
    t.run_each((test_socket_paths,))
    t.finish()


if __name__ == "__main__":
    assert CORES_PER_NODE > 0
    main()
