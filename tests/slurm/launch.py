#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run what `berth render --json` rendered, as `berth run` would: apply the
environment delta (unset, set) and exec the argv directly, never through a
shell. With --keep-env the delta is ignored (to show what it prevents).
Usage: launch.py [--keep-env] RENDER.json"""
import json
import os
import sys

args = sys.argv[1:]
keep = bool(args) and args[0] == "--keep-env"
if keep:
    args = args[1:]
if len(args) != 1:
    sys.exit(__doc__)
with open(args[0]) as f:
    r = json.load(f)
env = dict(os.environ)
if not keep:
    for name in r.get("env", {}).get("unset", []):
        env.pop(name, None)
    env.update(r.get("env", {}).get("set", {}))
os.execvpe(r["argv"][0], r["argv"], env)
