# SPDX-License-Identifier: MIT
"""Slurm's list notations, read by the Slurm tests' checkers (ensemble_check.py,
mpi_check.py, exclusive.sh)."""
import re


def hosts(s):
    """Slurm host list (node[1-3],x or space separated) -> names."""
    def expand(p):
        m = re.search(r"\[([^\]]*)\]", p)
        if not m:
            return [p] if p else []
        res = []
        for r in m.group(1).split(","):
            a, _, b = r.partition("-")
            for k in range(int(a), int(b or a) + 1):
                res += expand(p[:m.start()] + str(k).zfill(len(a)) + p[m.end():])
        return res
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += (ch == "[") - (ch == "]")
        if ch in ", " and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [h for p in parts + [cur] for h in expand(p)]


def idset(s):
    """'0-3,8' -> {0,1,2,3,8}"""
    ids = set()
    for part in filter(None, (s or "").split(",")):
        a, _, b = part.partition("-")
        ids.update(range(int(a), int(b or a) + 1))
    return ids
