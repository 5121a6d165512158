#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth status --watch against a real berthd (this machine, the localhost
# default): on a terminal (tmux) the live view shows the node, redraws when a
# lease is taken, and q, Ctrl-C and SIGTERM each leave with the terminal as
# it was; without a terminal it prints plain blocks, one per interval.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
if ! command -v tmux >/dev/null; then
    echo "SKIP: tmux is not installed (apt-get install tmux)"; exit 77
fi
unset SLURM_JOB_ID SLURM_JOBID PBS_JOBID BERTH_LEASE
chmod 700 "$TMP"
export BERTH_SOCKET=$TMP/s.sock
"$BERTHD" --foreground --socket "$BERTH_SOCKET" --state-dir "$TMP/state" \
    >"$TMP/berthd.out" 2>"$TMP/berthd.err" &
daemon=$!
tmx="tmux -L berth-watch-$$ -f /dev/null"
cleanup() {
    $tmx kill-server 2>/dev/null
    kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
# until SECONDS CMD...: CMD succeeds within the deadline (not a timing assertion)
until_ok() {
    local end=$((SECONDS + $1)); shift
    until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done
}
until_ok 10 test -S "$BERTH_SOCKET" || { echo "berthd did not start: $(cat "$TMP/berthd.err")"; exit 1; }
node=$("$BERTH" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocation"]["nodes"][0]["name"])')
pane() { $tmx capture-pane -p -t "$1"; }
shows() { pane "$1" | grep -q -- "$2"; }

# start_view NAME: berth status --watch in a 160x50 tmux terminal; the pane's
# shell records the terminal settings before and after, and the exit status
start_view() {
    local n=$1
    $tmx new-session -d -s "$n" -x 160 -y 50 \
        "stty -a >$TMP/$n.before; bash -c 'echo \$\$ >$TMP/$n.pid; exec \"$BERTH\" status --watch'; echo \$? >$TMP/$n.rc; stty -a >$TMP/$n.after; sleep 600"
    until_ok 10 shows "$n" "NODE" || not_ok "$n: the view did not come up: $(pane "$n")"
}
# ended NAME WANT_RC: the view ended with WANT_RC and the terminal is as before
ended() {
    local n=$1 want=$2
    if until_ok 10 test -s "$TMP/$n.after"; then ok; else not_ok "$n: berth did not exit"; return; fi
    [[ $(cat "$TMP/$n.rc") == "$want" ]] && ok || not_ok "$n: exit status $(cat "$TMP/$n.rc"), want $want"
    cmp -s "$TMP/$n.before" "$TMP/$n.after" && ok \
        || not_ok "$n: terminal settings not restored: $(diff "$TMP/$n.before" "$TMP/$n.after")"
    grep -q -- ' icanon' "$TMP/$n.after" && grep -q -- ' echo' "$TMP/$n.after" && ok \
        || not_ok "$n: canonical mode or echo left off"
    shows "$n" "q quits" && not_ok "$n: the view was left on the screen: $(pane "$n")" || ok
}

# ---- the live view ----
start_view live
shows live "$node" && ok || not_ok "node $node not shown: $(pane live)"
shows live "no leases" && ok || not_ok "no 'no leases' before a grant: $(pane live)"
shows live "0 granted" && ok || not_ok "no event figures: $(pane live)"
printf '\033[0m' >/dev/null
lease=$("$BERTH" acquire --cores 1 --label watch_me_now --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lease"])')
until_ok 10 shows live "watch_me_now" && ok || not_ok "the lease's label did not show: $(pane live)"
until_ok 10 shows live "1 granted" && ok || not_ok "the grant was not counted: $(pane live)"
shows live "grants/s" && ok || not_ok "no grant rate: $(pane live)"
pane live > "$TMP/screen.txt"
"$BERTH" release "$lease" >/dev/null
until_ok 10 shows live "1 released" && ok || not_ok "the release was not counted: $(pane live)"
$tmx send-keys -t live q
ended live 0
[[ -n ${BERTH_WATCH_SCREEN:-} ]] && cp "$TMP/screen.txt" "$BERTH_WATCH_SCREEN"

# ---- Ctrl-C and SIGTERM leave cleanly too ----
start_view ctrlc
$tmx send-keys -t ctrlc C-c
ended ctrlc 0
start_view term
kill -TERM "$(cat "$TMP/term.pid")"
ended term 143

# ---- no terminal: plain blocks, no escape codes ----
"$BERTH" status --watch --interval 0.2 >"$TMP/plain" 2>"$TMP/plain.err" </dev/null &
plain=$!
blocks() { (($(grep -c '^== ' "$TMP/plain") >= 3)); }
until_ok 20 blocks && ok || not_ok "fewer than 3 blocks: $(head -30 "$TMP/plain" "$TMP/plain.err")"
kill -INT $plain; wait $plain; rc=$?
[[ $rc == 0 ]] && ok || not_ok "plain watch: exit status $rc after SIGINT"
grep -q $'\033' "$TMP/plain" && not_ok "escape codes in plain output" || ok
grep -q "$node" "$TMP/plain" && ok || not_ok "plain output lacks the node: $(head -20 "$TMP/plain")"
grep -q "q quits" "$TMP/plain" && not_ok "plain output offers keys" || ok

# ---- usage errors ----
expect_fail "interval without watch" 2 "--interval goes with --watch" "$BERTH" status --interval 2
expect_fail "interval zero" 2 "--interval wants seconds from 0.1 to 3600, got '0'" "$BERTH" status --watch --interval 0
expect_fail "interval word" 2 "--interval wants seconds .*got 'often'" "$BERTH" status --watch --interval often

# ---- berthd going away ends the view ----
"$BERTH" status --watch --interval 0.2 >"$TMP/gone" 2>&1 </dev/null &
viewer=$!
until_ok 10 grep -qs '^== ' "$TMP/gone"
"$BERTH" shutdown >/dev/null 2>&1
wait $viewer; rc=$?
[[ $rc == 0 ]] && grep -q "berthd has stopped" "$TMP/gone" && ok || not_ok "after shutdown: rc=$rc, $(tail -3 "$TMP/gone")"
finish
