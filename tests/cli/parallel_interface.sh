#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth.parallel (mache.parallel's interface) against berth render and
# berth resolve over cli-site_machines' grid (parallel_interface.py says
# what), and the typed Polaris-style example under mypy --strict.
set -u
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/parallel_interface.py" || exit $?
