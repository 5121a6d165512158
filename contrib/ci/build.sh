#!/usr/bin/env bash
# Configures (once) and builds one build directory.
# Usage: contrib/ci/build.sh DIR [meson setup options...]
set -euo pipefail
dir=$1; shift
top=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ! -f $dir/build.ninja ]]; then
    meson setup "$dir" "$top" "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null
