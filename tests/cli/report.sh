#!/usr/bin/env bash
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
waits = [r for r in root.iter(ns + "rect") if r.get("class") == "wait"]
if len(waits) < 2:
    sys.exit("no wait shaded")
text = "".join(root.itertext())
for want in ("makespan", "mean utilisation", "longest wait", "blank = idle", "waiting for room"):
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
