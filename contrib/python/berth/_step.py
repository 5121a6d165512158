# SPDX-License-Identifier: MIT
"""How the Python client starts and stops a step: through ``berth
supervise`` (the berth command's step tree: a child subreaper, so that every
process of the step, also one that left its process group or session, is
found and stopped), with the stop sequence berth run uses: SIGTERM to every
process, SIGKILL after the grace, and only then is the lease released."""
import os
import shutil
import signal
import subprocess
import time
import warnings
from typing import Any, List, Optional, Tuple

GRACE_DEFAULT = 10.0     # seconds, as berth run's (Slurm's KillWait is 30)
_warned = False


def berth_cli() -> Optional[str]:
    """The berth command: $BERTH, else berth on PATH; None when neither."""
    return os.environ.get("BERTH") or shutil.which("berth")


def grace(value: Optional[float] = None) -> float:
    """The grace before SIGKILL: value, else BERTH_STOP_GRACE, else 10 s."""
    if value is None:
        text = os.environ.get("BERTH_STOP_GRACE", "")
        try:
            value = float(text) if text else GRACE_DEFAULT
        except ValueError:
            raise ValueError(f"BERTH_STOP_GRACE '{text}': give the grace before SIGKILL "
                             "as seconds from 0 to 86400, e.g. 10 or 0.5") from None
    if not 0 <= value <= 86400:
        raise ValueError(f"grace {value}: give it as seconds from 0 to 86400")
    return value


def supervised(cmd: List[str], grace_s: float, time_limit: Optional[float],
               nodes: int = 1) -> Tuple[List[str], bool]:
    """cmd under berth supervise, and True; cmd itself and False (with a
    warning, once) when no berth command is found. nodes: the lease's, for
    the wait an srun step needs after srun has ended (berth supervise
    --nodes)."""
    global _warned
    exe = berth_cli()
    if not exe:
        if not _warned:
            _warned = True
            warnings.warn("berth: no berth command (set BERTH or put it on PATH): a step "
                          "is stopped as one process, and processes it started may outlive "
                          "its lease", RuntimeWarning, stacklevel=3)
        return cmd, False
    lim = ["--time-limit", f"{time_limit:g}"] if time_limit else []
    return [exe, "supervise", "--grace", f"{grace_s:g}", "--nodes", str(max(nodes, 1)),
            *lim, "--", *cmd], True


def stop(p: "subprocess.Popen[Any]", grace_s: float) -> None:
    """Stop a step started by Lease.popen and wait until it is gone: SIGTERM
    (berth supervise passes it to every process of the step and sends
    SIGKILL after the grace itself), then a second SIGTERM (no more grace)
    and, last, SIGKILL should the supervisor not end."""
    if p.poll() is not None:
        return
    tree = bool(getattr(p, "berth_supervised", False))
    try:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(grace_s + (5 if tree else 0))
            return
        except subprocess.TimeoutExpired:
            pass
        if tree:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
                return
            except subprocess.TimeoutExpired:
                pass
        p.kill()
    except ProcessLookupError:
        pass
    p.wait()


def drain(p: "subprocess.Popen[Any]", seconds: float = 2.0) -> Tuple[Any, Any]:
    """What the step's pipes still hold, once it has been stopped; never
    waits longer than seconds for a process that kept them open (one that
    escaped the tree, with no berth command to hold it)."""
    end = time.monotonic() + seconds
    try:
        return p.communicate(timeout=max(0.0, end - time.monotonic()))
    except subprocess.TimeoutExpired as e:
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
        return e.output, e.stderr
    except ValueError:          # the pipes are closed already
        return None, None
