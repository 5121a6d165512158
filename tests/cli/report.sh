#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth report on a synthetic but well-formed events log of 300 steps on 8
# nodes (gen_events.py): the figures, an SVG that parses as XML with a bar
# for every step on every node it held, the HTML page, --cores, --allocation,
# and the errors (nothing written when it fails).
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
ALLOCATION=$TMP/alloc.json python3 "$here/gen_events.py" 300 8 32 >"$TMP/events.jsonl"

"$BERTH" report "$TMP/events.jsonl" --svg "$TMP/t.svg" >"$TMP/out" 2>"$TMP/err" && ok || not_ok "report --svg: $(cat "$TMP/err")"
grep -q "^steps 300 on 8 nodes, 256 cores (1 refused)$" "$TMP/out" && ok || not_ok "steps line: $(cat "$TMP/out")"
grep -Eq "^makespan [0-9]+m[0-9]+s \([0-9.]+ s\)$" "$TMP/out" && ok || not_ok "makespan: $(cat "$TMP/out")"
grep -Eq "^mean utilisation [0-9.]+% \(peak [0-9]+ of 256 cores held\)$" "$TMP/out" && ok || not_ok "utilisation: $(cat "$TMP/out")"
grep -Eq "^longest wait [0-9ms]+ \([0-9.]+ s, [a-z_]+[0-9]+\); [0-9]+ steps waited$" "$TMP/out" && ok || not_ok "wait: $(cat "$TMP/out")"

# check_svg FILE STEPS: parses; one <g class=step> per step and node, every lease titled
check_svg() {
    python3 - "$1" "$2" "$TMP/events.jsonl" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
path, steps, events = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(path).getroot()
if root.tag != ns + "svg":
    sys.exit(f"root is {root.tag}")
spans = sum(len(json.loads(l)["placement"]["nodes"]) for l in open(events)
            if '"granted"' in l)
groups = [g for g in root.iter(ns + "g") if g.get("class") == "step"]
if len(groups) != spans:
    sys.exit(f"{len(groups)} step bars, want {spans}")
leases = set()
for g in groups:
    t = g.find(ns + "title")
    if t is None or not g.findall(ns + "rect"):
        sys.exit("a step without its title or bar")
    leases.add(re.search(r" · (L\d+) · ", t.text).group(1))
if len(leases) != steps:
    sys.exit(f"{len(leases)} leases drawn, want {steps}")
waits = [r for g in groups for r in g.iter(ns + "rect") if r.get("class") == "wait"]
queued = [p for p in root.iter(ns + "path") if p.get("class") == "queued"]
cores = "one row per core" in "".join(root.itertext())
if cores:
    # by core no wait is painted over a core's row: one band counts them
    if len(waits) != 0 or len(queued) != 1:
        sys.exit(f"by core: {len(waits)} hatched waits on rows, {len(queued)} queue bands")
elif len(waits) < 2:
    sys.exit("no wait shaded")
text = "".join(root.itertext())
for want in ("makespan", "mean utilisation", "longest wait", "waiting for room"):
    if want not in text:
        sys.exit(f"'{want}' missing from the picture")
PY
}
check_svg "$TMP/t.svg" 300 && ok || not_ok "the SVG of 300 steps"

"$BERTH" report "$TMP/events.jsonl" --cores --svg "$TMP/c.svg" >/dev/null 2>"$TMP/err" && ok || not_ok "--cores: $(cat "$TMP/err")"
check_svg "$TMP/c.svg" 300 && ok || not_ok "the per-core SVG"
grep -q "one row per core" "$TMP/c.svg" && ok || not_ok "--cores title"

"$BERTH" report "$TMP/events.jsonl" --html "$TMP/t.html" --title "suite <7>" >/dev/null 2>"$TMP/err" && ok || not_ok "--html: $(cat "$TMP/err")"
head -c 15 "$TMP/t.html" | grep -q "<!DOCTYPE html>" && grep -q "<title>suite &lt;7&gt;</title>" "$TMP/t.html" \
    && grep -q "<svg xmlns" "$TMP/t.html" && ok || not_ok "the HTML page"

"$BERTH" report "$TMP/events.jsonl" --svg - >"$TMP/stdout.svg" 2>"$TMP/err" && ok || not_ok "--svg -"
head -c 4 "$TMP/stdout.svg" | grep -q "<svg" && ok || not_ok "--svg - writes only the SVG"

# an allocation with an idle node: drawn, and counted in the capacity
python3 - "$TMP/alloc.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["allocation"]["nodes"].append({"name": "idle01", "cores": "0-31", "ncores": 32})
json.dump(a, open(sys.argv[1], "w"))
PY
"$BERTH" report "$TMP/events.jsonl" --allocation "$TMP/alloc.json" --svg "$TMP/a.svg" >"$TMP/out" 2>"$TMP/err" && ok || not_ok "--allocation: $(cat "$TMP/err")"
grep -q "^steps 300 on 9 nodes, 288 cores" "$TMP/out" && grep -q ">idle01</text>" "$TMP/a.svg" && ok || not_ok "idle node: $(head -1 "$TMP/out")"

# ---- --json: the figures, per step and per label family ----
"$BERTH" report "$TMP/events.jsonl" --json >"$TMP/r.json" 2>"$TMP/err" && ok || not_ok "--json: $(cat "$TMP/err")"
python3 - "$TMP/r.json" "$TMP/events.jsonl" <<'PY' && ok || not_ok "the --json figures"
import json, sys
r = json.load(open(sys.argv[1]))
ev = [json.loads(l) for l in open(sys.argv[2])]
grants = [e for e in ev if e["event"] == "granted"]
assert r["steps_count"] == 300 == len(r["steps"]), r["steps_count"]
assert r["nodes"] == 8 and r["cores"] == 256 and r["refused"] == 1
times = [e["time"] for e in ev]
assert abs(r["makespan_s"] - (max(times) - min(times))) < 1e-6
assert 0 < r["utilisation"] <= 1
assert sum(f["steps"] for f in r["labels"]) == 300
fams = {f["family"] for f in r["labels"]}
assert "ocean_qu240" in fams and "a_rather_long_label_name" in fams, fams
for st in r["steps"]:
    assert abs(st["wait_s"] - (st["start_s"] - st["asked_s"])) < 1e-9 and st["wait_s"] >= 0
assert max(st["wait_s"] for st in r["steps"]) == r["longest_wait_s"]
assert sum(st["wait_s"] > 0 for st in r["steps"]) == r["waited"]
PY

# ---- a window, a batch, labels ----
# two batches: the log again, 1000 s later, with new lease ids
python3 - "$TMP/events.jsonl" >"$TMP/two.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
span = max(e["time"] for e in ev) - min(e["time"] for e in ev)
for shift in (0, span + 1000):
    for e in ev:
        e = dict(e, time=e["time"] + shift)
        if "lease" in e:
            e["lease"] = e["lease"] + ("b" if shift else "")
        print(json.dumps(e))
PY
"$BERTH" report "$TMP/two.jsonl" >"$TMP/out" && grep -q "^steps 600 " "$TMP/out" && ok || not_ok "both batches: $(head -1 "$TMP/out")"
for sel in "--run 1" "--run 2" "--run last" "--run -1"; do
    # shellcheck disable=SC2086
    "$BERTH" report "$TMP/two.jsonl" $sel --json >"$TMP/b.json" 2>"$TMP/err" \
        && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["steps_count"]==300 and r["refused"]==1, r["steps_count"]' "$TMP/b.json" \
        && ok || not_ok "$sel: $(cat "$TMP/err")"
done
cmp -s <("$BERTH" report "$TMP/two.jsonl" --run 1 --json) <("$BERTH" report "$TMP/events.jsonl" --json) \
    && ok || not_ok "--run 1 is the first batch's own report"
"$BERTH" report "$TMP/two.jsonl" --label 'ocean_qu240_*' --json >"$TMP/l.json" && python3 - "$TMP/l.json" <<'PY' && ok || not_ok "--label"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["steps_count"] > 0 and all(s["label"].startswith("ocean_qu240_") for s in r["steps"])
assert [f["family"] for f in r["labels"]] == ["ocean_qu240"]
PY
n1=$("$BERTH" report "$TMP/two.jsonl" --label 'viz_*' --label 'mesh_*' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["steps_count"])')
n2=$("$BERTH" report "$TMP/two.jsonl" --label 'viz_*' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["steps_count"])')
((n1 > n2 && n2 > 0)) && ok || not_ok "two --label patterns: $n1 vs $n2"
"$BERTH" report "$TMP/events.jsonl" --since +60 --until +120 --json >"$TMP/w.json" 2>"$TMP/err" && python3 - "$TMP/w.json" <<'PY' && ok || not_ok "--since/--until: $(cat "$TMP/err")"
import json, sys
r = json.load(open(sys.argv[1]))
assert abs(r["makespan_s"] - 60) < 1e-6, r["makespan_s"]
for s in r["steps"]:
    assert 0 <= s["asked_s"] <= s["start_s"] <= s["end_s"] <= 60 + 1e-9, s
PY
t0=$(head -1 "$TMP/events.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
cmp -s <("$BERTH" report "$TMP/events.jsonl" --since +60 --until +120 --json) \
       <("$BERTH" report "$TMP/events.jsonl" --since "$(python3 -c "print($t0 + 60)")" --until "$(python3 -c "print($t0 + 120)")" --json) \
    && ok || not_ok "offsets and Unix seconds give the same window"
expect_fail "bad since" 2 "--since: 'yesterday' is not a time" "$BERTH" report "$TMP/events.jsonl" --since yesterday
expect_fail "bad run" 2 "--run wants a batch number" "$BERTH" report "$TMP/events.jsonl" --run 0
expect_fail "no such run" 1 "--run 3: the log holds 2 batches" "$BERTH" report "$TMP/two.jsonl" --run 3
expect_fail "empty window" 1 "no step in the selection" "$BERTH" report "$TMP/events.jsonl" --since +99999
expect_fail "no label" 1 "no step in the selection \(those labels\)" "$BERTH" report "$TMP/events.jsonl" --label 'nope*'
expect_fail "inverted window" 1 "the window ends before it starts" "$BERTH" report "$TMP/events.jsonl" --since +100 --until +50

# ---- the allocation berthd logged when it started: no --allocation needed ----
python3 - "$TMP/alloc.json" "$TMP/events.jsonl" >"$TMP/logged.jsonl" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["allocation"]
first = json.loads(open(sys.argv[2]).readline())["time"]
nodes = [{"name": n["name"], "cores": n["cores"], "ncores": n["ncores"], "gpus": 0} for n in a["nodes"]]
print(json.dumps({"event": "allocation", "time": first - 30, "job_id": "4242", "machine": "pm-cpu",
                  "nodes": nodes}, separators=(",", ":")))
sys.stdout.write(open(sys.argv[2]).read())
PY
"$BERTH" report "$TMP/logged.jsonl" --svg "$TMP/logged.svg" >"$TMP/out" 2>"$TMP/err" && ok || not_ok "logged allocation: $(cat "$TMP/err")"
grep -q "^steps 300 on 9 nodes, 288 cores" "$TMP/out" && grep -q ">idle01</text>" "$TMP/logged.svg" && ok || not_ok "logged idle node: $(head -1 "$TMP/out")"
cmp -s <(sed -n 2p "$TMP/out") <("$BERTH" report "$TMP/events.jsonl" --allocation "$TMP/alloc.json" | sed -n 2p) \
    && ok || not_ok "berthd's start does not stretch the makespan"
{ head -1 "$TMP/logged.jsonl" | sed 's/"cores":"0-31"/"cores":31/'; tail -n +2 "$TMP/logged.jsonl"; } >"$TMP/badalloc.jsonl"
expect_fail "bad allocation event" 1 "line 1: .*nodes\[0\].cores' must be a core id set" "$BERTH" report "$TMP/badalloc.jsonl"

# ---- errors: exit status, message, nothing written ----
expect_fail "no log" 2 "no events log given; berthd writes events.jsonl" "$BERTH" report
expect_fail "two logs" 2 "unexpected argument 'b'" "$BERTH" report a b
expect_fail "two outputs" 2 "--svg and --html are two outputs" "$BERTH" report "$TMP/events.jsonl" --svg x --html y
expect_fail "unknown option" 2 "unknown or incomplete option '--png'" "$BERTH" report "$TMP/events.jsonl" --png x
expect_fail "missing log" 1 "cannot read the events log $TMP/nope.jsonl: No such file" "$BERTH" report "$TMP/nope.jsonl"
{ head -3 "$TMP/events.jsonl"; echo '{"event": "granted", "time": '; } >"$TMP/bad.jsonl"
expect_fail "bad line" 1 "bad.jsonl: line 4 is not JSON" "$BERTH" report "$TMP/bad.jsonl" --svg "$TMP/bad.svg"
[[ ! -e $TMP/bad.svg ]] && ok || not_ok "a failed report wrote its SVG"
: >"$TMP/empty.jsonl"
expect_fail "empty log" 1 "the events log is empty" "$BERTH" report "$TMP/empty.jsonl"
echo '{"nodes": []}' >"$TMP/noalloc.json"
expect_fail "bad allocation" 1 "noalloc.json: the allocation has no \"nodes\" array" "$BERTH" report "$TMP/events.jsonl" --allocation "$TMP/noalloc.json"
expect_fail "unreadable allocation" 1 "cannot read the allocation $TMP/none.json" "$BERTH" report "$TMP/events.jsonl" --allocation "$TMP/none.json"
expect_fail "unwritable output" 1 "cannot write $TMP/no/dir.svg" "$BERTH" report "$TMP/events.jsonl" --svg "$TMP/no/dir.svg"
finish
