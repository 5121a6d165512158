#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures (once) and builds one build directory; on failure shows the
# compiler's messages.
# Usage: contrib/ci/build.sh DIR [meson setup options...]
set -uo pipefail
dir=$1; shift
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
if [[ ! -f $dir/build.ninja ]]; then
    if ! meson setup "$dir" "$top" "$@" >"$dir.setup.log" 2>&1; then
        cat "$dir.setup.log" >&2
        echo "build: meson setup of $dir failed" >&2
        exit 1
    fi
fi
if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
    grep -E -A8 "error|warning" "$dir.build.log" | head -80 >&2
    echo "build: ninja in $dir failed (full log: $dir.build.log)" >&2
    exit 1
fi
