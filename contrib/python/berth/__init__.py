# SPDX-License-Identifier: MIT
"""berth: a client of berthd, the ledger of one batch allocation.

    import berth
    with berth.acquire(ntasks=16, cpus_per_task=2, argv=["./model"]) as lease:
        lease.run(check=True)          # the rendered launch, on its placement

A Client is one connection; leases end when it closes. berth.aio is the
same for asyncio. Errors are BerthError subclasses, one per stable protocol
code (see berth.errors). Standard library only; Python 3.9 or later."""
from ._step import stop as stop_step
from ._wire import default_socket_path
from .client import (ACQUIRE_FIELDS, PROTOCOL_VERSION, Client, Event, Launch, Lease,
                     Placement, acquire, connect, core_threads, socket_path, watch)
from .errors import (ERRORS, BerthError, Busy, Cancelled, ClientTimeout, ConnectFailed,
                     Forbidden, Internal, InvalidRequest, NotFound, PlacementUnusable,
                     ProtocolError, ShuttingDown, TooLarge, Unsatisfiable,
                     UnsupportedVersion, WaitTimeout, error_from_reply)

__version__ = "0.1.0"

__all__ = [
    "ACQUIRE_FIELDS", "PROTOCOL_VERSION", "Client", "Event", "Launch", "Lease", "Placement",
    "acquire", "connect", "core_threads", "default_socket_path", "socket_path", "stop_step",
    "watch",
    "ERRORS", "BerthError", "Busy", "Cancelled", "ClientTimeout", "ConnectFailed",
    "Forbidden", "Internal", "InvalidRequest", "NotFound", "PlacementUnusable",
    "ProtocolError", "ShuttingDown", "TooLarge", "Unsatisfiable", "UnsupportedVersion",
    "WaitTimeout", "error_from_reply",
]
