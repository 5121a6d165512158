#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages and --help say the same: for every berth command, the options
# its --help lists are exactly those its section of berth(1) describes (the
# tags of its .TP items), and berthd(8)'s OPTIONS are those of berthd --help.
# Every command of `berth --help` has a section, and no section is for a
# command that does not exist.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTHD:?BERTHD must name the berthd executable}"
man=${BERTH_SRCDIR:-$(dirname "$0")/../..}/contrib/man

# help_opts: the long options of a --help text on stdin: those of its usage
# lines, and the tags of its option lines (indented, starting with -; the
# tag ends where two spaces start the description)
help_opts() {
    python3 -c '
import re, sys
found, usage = set(), False
for line in sys.stdin.read().split("\n"):
    s = line.strip()
    if line.lower().startswith("usage:") or (usage and s.startswith("[")):
        usage = True
        found |= set(re.findall(r"--[a-z][a-z0-9-]*", line))
        continue
    usage = False
    if line[:1].isspace() and s.startswith("-"):
        found |= set(re.findall(r"--[a-z][a-z0-9-]*", s.split("  ")[0]))
print("\n".join(sorted(found)))'
}
# man_opts FILE SECTION-START-REGEX: the long options tagged in .TP items of one section
man_opts() {
    python3 - "$1" "$2" <<'PY'
import re, sys
path, start = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
on, tag, found = False, False, set()
for line in lines:
    if re.match(r"\.S[SH] ", line):
        on = re.match(start, line) is not None
        continue
    if not on:
        continue
    if line.startswith(".TP"):
        tag = True
        continue
    if tag:
        found |= set(re.findall(r"--[a-z][a-z0-9-]*", line.replace("\\-", "-")))
        tag = False
for o in sorted(found):
    print(o)
PY
}
# same DESC HELP MAN: the two sets of options agree
same() {
    if [[ $2 == "$3" && -n $2 ]]; then ok
    else
        not_ok "$1: --help and the man page differ:"$'\n'"$(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | sed 's/^</  only in --help:/; s/^>/  only in the man page:/')"
    fi
}

cmds=$("$BERTH" --help | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
[[ $(wc -w <<<"$cmds") -ge 11 ]] && ok || not_ok "too few commands in berth --help: $cmds"
for c in $cmds; do
    same "berth $c" "$("$BERTH" "$c" --help | help_opts)" "$(man_opts "$man/berth.1" "\.SS berth $c( |$)")"
done
sections=$(grep -oE '^\.SS berth [a-z]+' "$man/berth.1" | awk '{print $3}')
for s in $sections; do
    grep -qxF "$s" <<<"$cmds" && ok || not_ok "berth(1) has a section for '$s', which berth does not know"
done
same "berthd" "$("$BERTHD" --help | help_opts)" "$(man_opts "$man/berthd.8" '\.SH OPTIONS')"
# the pages name each other and are the ones installed
for p in berth.1 berthd.8 berth-protocol.7; do
    grep -q '^\.TH ' "$man/$p" && grep -q '^\.SH NAME' "$man/$p" && grep -q '^\.SH SEE ALSO' "$man/$p" && ok \
        || not_ok "$p lacks .TH, NAME or SEE ALSO"
done
# the files the help texts, the man pages and the README name ship in the
# repository: no .md file that is not there, nothing outside it (../shared)
src=${BERTH_SRCDIR:-$(dirname "$0")/../..}
texts=$TMP/texts
: >"$texts"
for c in $cmds; do "$BERTH" "$c" --help >>"$texts" 2>&1; done
"$BERTHD" --help >>"$texts" 2>&1
cat "$man"/*.[178] "$src/protocol/PROTOCOL.md" >>"$texts"
for f in $(grep -oE '[A-Za-z0-9_./-]+\.md' "$texts" | sort -u); do
    [[ -n $(find "$src" -name "$(basename "$f")" -not -path '*/.git/*' | head -1) ]] && ok \
        || not_ok "the docs name $f, which is not in the repository"
done
grep -n '\.\./shared/brief' "$texts" "$src/README.md" && not_ok "the docs point at ../shared/brief, outside the repository" || ok
# --socket says the default that is used: $BERTH_SOCKET, else the path berthd
# listens on by default, and which that is here
for c in run acquire release status shutdown; do
    h=$(env -u BERTH_SOCKET XDG_RUNTIME_DIR=/run/x SLURM_JOB_ID=77 "$BERTH" "$c" --help | tr -s ' \n' ' ')
    [[ $h == *'$BERTH_SOCKET, else'*'/tmp/berth-UID/JOB.sock'*'here: /run/x/berth/77.sock'* ]] && ok \
        || not_ok "berth $c --help does not say the socket default in force: $h"
done
# every op and event of the protocol is in berth-protocol(7)
for w in hello acquire release render resources status watch shutdown reclaim placed granted waited released refused; do
    grep -qE "^\.B $w\$" "$man/berth-protocol.7" && ok || not_ok "berth-protocol(7) does not describe '$w'"
done
finish
