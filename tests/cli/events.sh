#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth events against a real berthd (this machine): the history (berthd's
# start with its allocation first, then a grant, a refusal, a release), as
# text and as JSON lines that parse; --follow sees events as they happen and
# ends when berthd stops; usage errors.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
unset SLURM_JOB_ID SLURM_JOBID PBS_JOBID BERTH_LEASE
chmod 700 "$TMP"
export BERTH_SOCKET=$TMP/s.sock
"$BERTHD" --foreground --socket "$BERTH_SOCKET" --state-dir "$TMP/state" >/dev/null 2>"$TMP/berthd.err" &
daemon=$!
follow= followj=
trap 'kill $follow $followj $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
until_ok() {
    local end=$((SECONDS + $1)); shift
    until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done
}
until_ok 10 test -S "$BERTH_SOCKET" || { echo "berthd did not start: $(cat "$TMP/berthd.err")"; exit 1; }
"$BERTH" events --follow >"$TMP/follow.txt" 2>"$TMP/follow.err" & follow=$!
"$BERTH" events --follow --history --json >"$TMP/followj.txt" 2>&1 & followj=$!
sleep 0.5
lease=$("$BERTH" acquire --cores 1 --label events_one --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lease"])')
"$BERTH" acquire --cores 100000 --label events_too_big >/dev/null 2>&1
"$BERTH" release "$lease" >/dev/null

"$BERTH" events >"$TMP/h.txt" 2>"$TMP/err" && ok || not_ok "events: $(cat "$TMP/err")"
[[ $(wc -l <"$TMP/h.txt") == 4 ]] && ok || not_ok "4 lines of history: $(cat "$TMP/h.txt")"
sed -n 1p "$TMP/h.txt" | grep -Eq '^[0-9-]+ [0-9:.]+ allocation +berthd started: job \(none\) on localhost, 1 node, [0-9]+ cores' && ok || not_ok "start line: $(sed -n 1p "$TMP/h.txt")"
sed -n 2p "$TMP/h.txt" | grep -Eq " granted +$lease events_one: 1 core on " && ok || not_ok "grant line: $(sed -n 2p "$TMP/h.txt")"
sed -n 3p "$TMP/h.txt" | grep -Eq ' refused +events_too_big: unsatisfiable: ' && ok || not_ok "refusal line: $(sed -n 3p "$TMP/h.txt")"
sed -n 4p "$TMP/h.txt" | grep -Eq " released +$lease events_one \(released\)$" && ok || not_ok "release line: $(sed -n 4p "$TMP/h.txt")"
"$BERTH" events --json >"$TMP/h.json" && python3 - "$TMP/h.json" "$TMP/state/events.jsonl" <<'PY' && ok || not_ok "events --json: $(cat "$TMP/h.json")"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
assert [e["event"] for e in got] == ["allocation", "granted", "refused", "released"], got
assert got[0]["nodes"][0]["cores"] and got[1]["label"] == "events_one"
assert open(sys.argv[1]).read() == open(sys.argv[2]).read()   # as berthd logged them
PY
until_ok 10 sh -c "[ \$(wc -l <'$TMP/follow.txt') -ge 3 ]" && ok || not_ok "--follow: $(cat "$TMP/follow.txt" "$TMP/follow.err")"
grep -q allocation "$TMP/follow.txt" && not_ok "--follow without --history replayed the start" || ok
until_ok 10 sh -c "[ \$(wc -l <'$TMP/followj.txt') -ge 4 ]" && head -1 "$TMP/followj.txt" | grep -q '"event":"allocation"' \
    && ok || not_ok "--follow --history --json: $(cat "$TMP/followj.txt")"
"$BERTH" shutdown >/dev/null
wait $follow; rc=$?
[[ $rc == 0 ]] && ok || not_ok "--follow after berthd stopped: exit $rc"
wait $followj
follow= followj=
expect_fail "history alone" 2 "--history goes with --follow" "$BERTH" events --history
expect_fail "argument" 2 "unexpected argument 'x'" "$BERTH" events x
expect_fail "no daemon" 1 "" "$BERTH" events
"$BERTH" events --help | grep -q -- '--follow' && ok || not_ok "--help"
finish
