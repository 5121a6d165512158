#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree's own rules about its files: LICENSE is there, every source file
# (C, Python, shell, meson) names its licence in an SPDX line near its top,
# and no file names a specification file (NN-name.md) that the repository
# does not hold. Reads the files git tracks; skipped outside a git checkout.
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
src=${BERTH_SRCDIR:?BERTH_SRCDIR must name the source tree}
if ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "SKIPPED sources: $src is not a git checkout"; exit 77
fi
mapfile -t files < <(git -C "$src" ls-files -- '*.c' '*.h' '*.py' '*.sh' '*meson.build' \
    ':!:tests/fuzz/corpus/*')
[[ -f $src/LICENSE ]] && grep -q '^MIT License' "$src/LICENSE" && ok || not_ok "LICENSE (MIT) is missing"
untagged=()
for f in "${files[@]}"; do
    head -n 3 "$src/$f" | grep -q 'SPDX-License-Identifier: MIT' || untagged+=("$f")
done
((${#untagged[@]} == 0)) && ok || not_ok "no SPDX line in the first 3 lines of ${#untagged[@]} files: ${untagged[*]:0:8}"
((${#files[@]} > 100)) && ok || not_ok "only ${#files[@]} source files listed (git ls-files)"
# a specification file named in a comment or a document must be in the repository
missing=()
while IFS=: read -r f line name; do
    git -C "$src" ls-files --error-unmatch "*/$name" "$name" >/dev/null 2>&1 || missing+=("$f:$line $name")
done < <(git -C "$src" grep -noE '[0-9]{2}-[a-z-]+\.md' -- "${files[@]}" '*.md' 'contrib/man/*' | sed 's/:\([0-9]*\):/:\1:/')
((${#missing[@]} == 0)) && ok || not_ok "files name specification files the repository does not hold: ${missing[*]:0:6}"
finish
