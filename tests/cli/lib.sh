# SPDX-License-Identifier: MIT
# Sourced by the command-line tests: small assertions that count, and a
# closing "N passed, N failed" line. $BERTH is the CLI under test.
set -u
: "${BERTH:?BERTH must name the berth executable}"
passed=0 failed=0
TMP=$(mktemp -d /tmp/berth-cli-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

ok() { passed=$((passed + 1)); }
not_ok() { failed=$((failed + 1)); printf 'FAIL: %s\n' "$*" >&2; }

# expect_out DESC EXPECTED CMD...: CMD exits 0 and prints exactly EXPECTED
expect_out() {
    local desc=$1 want=$2; shift 2
    local got rc
    got=$("$@" 2>"$TMP/stderr"); rc=$?
    if [[ $rc == 0 && $got == "$want" ]]; then ok
    else not_ok "$desc: rc=$rc"$'\n'"  want: $want"$'\n'"  got:  $got"$'\n'"  stderr: $(cat "$TMP/stderr")"; fi
}

# expect_fail DESC RC PATTERN CMD...: CMD exits RC and stderr matches PATTERN (grep -E)
expect_fail() {
    local desc=$1 want_rc=$2 pat=$3; shift 3
    local rc
    "$@" >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
    if [[ $rc == "$want_rc" ]] && grep -Eq -- "$pat" "$TMP/stderr"; then ok
    else not_ok "$desc: rc=$rc (want $want_rc), stderr: $(cat "$TMP/stderr") (want /$pat/)"; fi
}

# expect_true DESC CMD...: CMD exits 0
expect_true() {
    local desc=$1; shift
    if "$@" >"$TMP/stdout" 2>"$TMP/stderr"; then ok
    else not_ok "$desc: $(cat "$TMP/stderr")"; fi
}

finish() {
    echo "$passed passed, $failed failed"
    [[ $failed == 0 ]]
}
