#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# meson install into a scratch DESTDIR: every file lands where it belongs
# (programs, libberth with its header and pkg-config file, machine files,
# systemd user units naming the installed berthd, man pages, bash
# completion), the installed programs run, a program builds against the
# installed header and library through pkg-config, and completion works.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
: "${BERTH_BUILD_ROOT:?BERTH_BUILD_ROOT must name the meson build directory}"
dest=$TMP/dest
if ! meson install -C "$BERTH_BUILD_ROOT" --destdir "$dest" --no-rebuild >"$TMP/install.log" 2>&1; then
    echo "FAIL: meson install: $(tail -20 "$TMP/install.log")"; exit 1
fi
eval "$(meson introspect "$BERTH_BUILD_ROOT" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("prefix", "bindir", "libdir", "includedir", "datadir", "mandir"):
    print(f"{k}={o[k]!r}")')"
root=$dest$prefix
want=(
    "$bindir/berth" "$bindir/berthd"
    "$libdir/libberth.so" "$libdir/libberth.so.0" "$libdir/libberth.so.0.1.0"
    "$includedir/berth/berth.h" "$libdir/pkgconfig/berth.pc"
    lib/systemd/user/berthd@.service lib/systemd/user/berthd@.socket
    "$mandir/man1/berth.1" "$mandir/man8/berthd.8" "$mandir/man7/berth-protocol.7"
    "$datadir/bash-completion/completions/berth" "$datadir/doc/berth/PROTOCOL.md"
)
for m in "$BERTH_SRCDIR"/machines/*.cfg; do want+=("$datadir/berth/machines/$(basename "$m")"); done
# the Python client, in the site-packages of the python3 meson found
while IFS= read -r f; do want+=("${f#"$prefix"/}"); done < <(
    meson introspect "$BERTH_BUILD_ROOT" --installed | python3 -c '
import json, sys
for dst in json.load(sys.stdin).values():
    if "/berth/" in dst and dst.endswith((".py", "/py.typed")):
        print(dst)')
for f in __init__.py aio.py client.py py.typed; do
    printf '%s\n' "${want[@]}" | grep -q "/berth/$f\$" && ok || not_ok "the Python client's $f is not installed"
done
for f in "${want[@]}"; do
    [[ -s $root/$f || ($f == */py.typed && -e $root/$f) ]] && ok || not_ok "not installed: $prefix/$f"
done
# nothing installed that the list above does not name
while IFS= read -r f; do
    rel=${f#"$root"/}
    printf '%s\n' "${want[@]}" | grep -qxF -- "$rel" && ok || not_ok "installed but not checked: $rel"
done < <(find "$dest" -type f -o -type l)
[[ -x $root/$bindir/berth && -x $root/$bindir/berthd ]] && ok || not_ok "programs not executable"

# the installed programs run
LD_LIBRARY_PATH=$root/$libdir "$root/$bindir/berth" --version | grep -q "^berth 0\." && ok || not_ok "installed berth --version"
"$root/$bindir/berthd" --version 2>&1 | grep -q "0\." && ok || not_ok "installed berthd --version"
# the unit starts the installed berthd
grep -q "^ExecStart=$prefix/$bindir/berthd --foreground" "$root/lib/systemd/user/berthd@.service" && ok \
    || not_ok "unit ExecStart: $(grep ExecStart "$root/lib/systemd/user/berthd@.service")"
# the man pages format without a warning
if command -v man >/dev/null && command -v groff >/dev/null; then
    for p in man1/berth.1 man8/berthd.8 man7/berth-protocol.7; do
        w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$root/$mandir/$p" 2>&1 >/dev/null)
        [[ -z $w ]] && ok || not_ok "$p: $w"
    done
fi

# the library exports exactly the functions its header declares
declared=$(grep -oE '\bberth_[a-z_]+ \(' "$root/$includedir/berth/berth.h" | grep -oE 'berth_[a-z_]+' | sort -u)
exported=$(nm -D --defined-only "$root/$libdir/libberth.so" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[[ -n $declared && -z $missing ]] && ok || not_ok "declared in berth.h but not exported by libberth.so: $missing"
[[ -z $extra ]] && ok || not_ok "exported by libberth.so but not declared in berth.h: $extra"

# a client builds against the installed header and library via pkg-config
if command -v pkg-config >/dev/null && command -v cc >/dev/null; then
    cat >"$TMP/client.c" <<'C'
#include <berth/berth.h>
#include <stdio.h>
int main (void)
{
    berth_client_error_t err;
    berth_client_t *c = berth_connect ("/nonexistent/berth.sock", &err);
    printf ("%s\n", c ? "connected" : err.code);
    return c != NULL;
}
C
    export PKG_CONFIG_PATH=$root/$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
    # shellcheck disable=SC2046
    if cc -o "$TMP/client" "$TMP/client.c" $(pkg-config --cflags --libs berth) 2>"$TMP/cc.err"; then
        ok
        out=$(LD_LIBRARY_PATH=$root/$libdir "$TMP/client") && [[ -n $out ]] && ok || not_ok "client against the installed libberth: $out"
        ldd "$TMP/client" 2>/dev/null | grep -q "libberth.so.0 => $root" || LD_LIBRARY_PATH=$root/$libdir ldd "$TMP/client" | grep -q "libberth.so.0 => $root" && ok || not_ok "client not linked to the installed libberth"
    else
        not_ok "build against the installed libberth: $(cat "$TMP/cc.err")"
    fi
fi

# bash completion: subcommands and a subcommand's options
comp() {   # comp WORDS...: what completing the last word offers
    PATH=$root/$bindir:$PATH LD_LIBRARY_PATH=$root/$libdir bash -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _berth
        printf "%s\n" "${COMPREPLY[@]}"' comp "$root/$datadir/bash-completion/completions/berth" "$@"
}
[[ $(comp berth rep) == report ]] && ok || not_ok "completion of 'berth rep': $(comp berth rep)"
comp berth status --w | grep -qx -- --watch && ok || not_ok "completion of 'berth status --w': $(comp berth status --w)"
comp berth report --s | grep -qx -- --svg && ok || not_ok "completion of 'berth report --s'"
finish
