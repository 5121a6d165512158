#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth status and --watch fit the window (issue 19), against real berthds:
#  1. this machine (2 cores), one lease holding both, 10 steps waiting with
#     long labels: under tmux at 80x24 the live view keeps the header, the
#     node and the lease in sight, cuts the queue with "... N more", says the
#     head's reason once, the rest in a few words, no line wider than 80;
#     a request's reason is known as soon as it waits (never "not tried yet").
#  2. the size of a real run (tests/bench/big_status.py: 10,000 nodes of a
#     fake Slurm allocation, 5,000 leases, 1,000 waiting): the plain view
#     summarises, --nodes all has a row per node, --json has everything,
#     and the live view at 80x24 still fits.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
if ! command -v tmux >/dev/null; then
    echo "SKIP: tmux is not installed (apt-get install tmux)"; exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
unset SLURM_JOB_ID SLURM_JOBID PBS_JOBID BERTH_LEASE
chmod 700 "$TMP"
export BERTH_SOCKET=$TMP/s.sock
"$BERTHD" --foreground --socket "$BERTH_SOCKET" --state-dir "$TMP/state" \
    >"$TMP/berthd.out" 2>"$TMP/berthd.err" &
daemon=$!
tmx="tmux -L berth-window-$$ -f /dev/null"
waiters=() big=
cleanup() {
    $tmx kill-server 2>/dev/null
    for w in "${waiters[@]}"; do kill "$w" 2>/dev/null; done
    [[ -n $big ]] && { exec 7>&-; wait "$big" 2>/dev/null; }
    kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
until_ok() {
    local end=$((SECONDS + $1)); shift
    until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done
}
until_ok 10 test -S "$BERTH_SOCKET" || { echo "berthd did not start: $(cat "$TMP/berthd.err")"; exit 1; }
json() { "$BERTH" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"; }
queued() { [[ $(json 'len(s["queue"])') == "$1" ]]; }

ncores=$(json 'sum(n["ncores"] for n in s["allocation"]["nodes"])')
"$BERTH" acquire --cores "$ncores" --label holds_every_core_of_this_node --json >/dev/null
long=a_step_label_far_longer_than_any_column_of_the_view
"$BERTH" run --local --cores 1 --label "${long}_0" -- true >/dev/null 2>&1 &
waiters+=($!)
until_ok 10 queued 1 || not_ok "the first step does not wait"
why=$(json 's["queue"][0]["why"]')
[[ -n $why && $why != "not tried yet" ]] && ok || not_ok "the first request's reason is '$why'"
for i in $(seq 1 9); do
    "$BERTH" run --local --cores 1 --label "${long}_$i" -- true >/dev/null 2>&1 &
    waiters+=($!)
done
until_ok 20 queued 10 || not_ok "not 10 waiting: $(json 'len(s["queue"])')"

# narrow FILE: no line of it is wider than 80 characters
narrow() { python3 -c 'import sys; sys.exit(any(len(l) > 80 for l in open(sys.argv[1], encoding="utf-8").read().splitlines()))' "$1"; }
# view NAME COLS ROWS: berth status --watch in a tmux terminal of that size
view() {
    # the socket in the command: a tmux server keeps the environment it started with
    $tmx new-session -d -s "$1" -x "$2" -y "$3" "BERTH_SOCKET=$BERTH_SOCKET exec \"$BERTH\" status --watch"
    until_ok 10 sh -c "$tmx capture-pane -p -t $1 | grep -q 'q quits'" || not_ok "$1: no view: $($tmx capture-pane -p -t "$1")"
    sleep 0.3
    $tmx capture-pane -p -t "$1" >"$TMP/$1.txt"
}
view small 80 24
s=$TMP/small.txt
head -1 "$s" | grep -q '^berthd ' && ok || not_ok "80x24: the header scrolled away: $(cat "$s")"
grep -q '^NODE ' "$s" && grep -q '^LEASE ' "$s" && grep -q 'holds_every_core_of…' "$s" && ok \
    || not_ok "80x24: node or lease rows missing: $(cat "$s")"
[[ $(grep -Ec '^[0-9]+ {2,}' "$s") == 10 ]] && ok || not_ok "80x24: not all 10 waiting shown: $(cat "$s")"
[[ $(grep -c 'next:' "$s") == 1 ]] && ok || not_ok "80x24: the head's reason not once"
grep -q 'behind #1' "$s" && not_ok "80x24: rows repeat the head's story: $(cat "$s")" || ok
grep -Eq "^1 +a_step_label_[a-z_]*… " "$s" && ok || not_ok "80x24: labels not cut with an ellipsis: $(cat "$s")"
grep -q 'q quits' "$s" && ok || not_ok "80x24: the last line is gone"
narrow "$s" && ok || not_ok "80x24: a line wider than 80"
# columns line up: every queue row's WAITED column starts where its head does
python3 - "$s" <<'PY' && ok || not_ok "80x24: queue columns out of line: $(cat "$s")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith("#    LABEL"))
col = head.index("WAITED")
rows = [l for l in lines if re.match(r"\d+ {2,}", l)]
assert len(rows) >= 3, rows
for r in rows:
    assert r[col - 1] == " " and r[col] != " ", (r, col)
PY
# a shorter window: the queue is cut, header and lease stay
view short 80 16
head -1 "$TMP/short.txt" | grep -q '^berthd ' && grep -q '^L1 ' "$TMP/short.txt" \
    && grep -Eq '^\.\.\. [0-9]+ more waiting$' "$TMP/short.txt" && [[ $(wc -l <"$TMP/short.txt") -le 16 ]] \
    && ok || not_ok "80x16: $(cat "$TMP/short.txt")"
view wide 200 60
grep -Eq '^\.\.\. [0-9]+ more waiting$' "$TMP/wide.txt" && not_ok "200x60 still cuts the queue: $(cat "$TMP/wide.txt")" || ok
[[ $(grep -Ec "^[0-9]+ +$long" "$TMP/wide.txt") == 0 ]] && ok || not_ok "200x60: a 52-character label in a 20-character column"
"$BERTH" status >"$TMP/plain" && [[ $(grep -Ec "^[0-9]+ {2,}" "$TMP/plain") == 10 ]] && ok || not_ok "plain status lacks waiting rows: $(cat "$TMP/plain")"
expect_fail "nodes what" 2 "--nodes wants 'all' .*got 'some'" "$BERTH" status --nodes some
expect_fail "json watch" 2 "use berth events --json --follow" "$BERTH" status --json --watch
for w in "${waiters[@]}"; do kill "$w" 2>/dev/null; wait "$w" 2>/dev/null; done
waiters=()

# ---- the size of a real run ----
mkfifo "$TMP/hold"
BERTH="$BERTH" BERTHD="$BERTHD" python3 "$here/../bench/big_status.py" --keep "$TMP/big" \
    <"$TMP/hold" >"$TMP/big.out" 2>&1 &
big=$!
exec 7>"$TMP/hold"
until_ok 240 grep -q ready "$TMP/big.out" || { not_ok "the big berthd: $(cat "$TMP/big.out")"; finish; exit; }
export BERTH_SOCKET=$TMP/big/s.sock
"$BERTH" status >"$TMP/bp" 2>"$TMP/err" && ok || not_ok "big status: $(cat "$TMP/err")"
(($(wc -l <"$TMP/bp") < 130)) && ok || not_ok "big status prints $(wc -l <"$TMP/bp") lines"
grep -q '^nodes 10000 · cores 1280000 (1000000 held, 280000 free)' "$TMP/bp" && ok || not_ok "big totals: $(head -3 "$TMP/bp")"
grep -q '^by state: 0 full · 10000 partly held · 0 idle' "$TMP/bp" && ok || not_ok "big states: $(head -3 "$TMP/bp")"
grep -q '^BUSIEST ' "$TMP/bp" && grep -q '^\.\.\. 9995 more nodes$' "$TMP/bp" && ok || not_ok "big busiest: $(head -12 "$TMP/bp")"
grep -q '^\.\.\. 4950 more leases (berth status --json lists them all)$' "$TMP/bp" && ok || not_ok "big leases cut"
grep -q '^1000 waiting · next: ' "$TMP/bp" && grep -q '^\.\.\. 950 more waiting$' "$TMP/bp" && ok || not_ok "big queue: $(tail -5 "$TMP/bp")"
"$BERTH" status --nodes all >"$TMP/ball" && [[ $(grep -Ec '^(nid[0-9]{6}|'"$(hostname -s)"') ' "$TMP/ball") == 10000 ]] \
    && ok || not_ok "--nodes all: $(grep -Ec '^nid' "$TMP/ball") node rows"
"$BERTH" status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert (len(s["allocation"]["nodes"]), len(s["leases"]), len(s["queue"])) == (10000, 5000, 1000)' \
    && ok || not_ok "big --json"
view big 80 24
b=$TMP/big.txt
head -1 "$b" | grep -q '^berthd ' && grep -q '^BUSIEST ' "$b" && grep -q '^LEASE ' "$b" \
    && grep -Eq '^\.\.\. [0-9]+ more leases' "$b" && grep -Eq '^\.\.\. [0-9]+ more waiting' "$b" \
    && grep -q 'q quits' "$b" && ok || not_ok "big 80x24: $(cat "$b")"
narrow "$b" && ok || not_ok "big 80x24: a line wider than 80"
finish
