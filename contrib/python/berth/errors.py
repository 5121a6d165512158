# SPDX-License-Identifier: MIT
"""Errors of the berth client: one class per stable error code of the
protocol (PROTOCOL.md "Errors"), all deriving from BerthError, plus the
client's own (the daemon cannot be reached, it spoke out of turn, a local
step's cores are not usable here, the client was closed under a waiting
request, a reply did not come within the client's own timeout)."""
from typing import Any, Dict, Mapping, Optional, Type


class BerthError(Exception):
    """An error with the protocol's stable ``code`` and a ``message`` for
    people. ``reply`` is the daemon's whole reply, when there was one."""

    code: str = "error"

    def __init__(self, message: str, code: Optional[str] = None,
                 reply: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.reply: Optional[Mapping[str, Any]] = reply

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"


# One class a code, each written out rather than made in a loop from a
# table: callers catch them by name, so mypy and help() must see real
# classes, each with its own text.
class InvalidRequest(BerthError):
    """The line or a field is malformed (``invalid_request``)."""
    code = "invalid_request"


class Unsatisfiable(BerthError):
    """The request cannot be met even by the empty allocation, or it would
    outlast the allocation (``unsatisfiable``)."""
    code = "unsatisfiable"


class WaitTimeout(BerthError):
    """The request waited its ``timeout`` without fitting (``timeout``)."""
    code = "timeout"


class NotFound(BerthError):
    """No such lease (``not_found``)."""
    code = "not_found"


class Forbidden(BerthError):
    """The peer may not do this (``forbidden``)."""
    code = "forbidden"


class TooLarge(BerthError):
    """The request line is over the size limit (``too_large``)."""
    code = "too_large"


class ShuttingDown(BerthError):
    """berthd is draining and grants nothing new (``shutting_down``)."""
    code = "shutting_down"


class UnsupportedVersion(BerthError):
    """The server does not speak the protocol version asked for
    (``unsupported_version``)."""
    code = "unsupported_version"


class Busy(BerthError):
    """A limit was reached, or ``wait=False`` and it does not fit now
    (``busy``)."""
    code = "busy"


class Internal(BerthError):
    """A bug or a resource failure in berthd; may be retried (``internal``)."""
    code = "internal"


class ConnectFailed(BerthError):
    """The client could not reach berthd (no socket, nobody listening).
    ``missing``: there was no socket at all."""
    code = "connect"

    def __init__(self, message: str, code: Optional[str] = None,
                 reply: Optional[Mapping[str, Any]] = None, missing: bool = False) -> None:
        super().__init__(message, code, reply)
        self.missing = missing


class ProtocolError(BerthError):
    """berthd closed the connection or sent something that is not a reply."""
    code = "protocol"


class PlacementUnusable(BerthError):
    """A local step's placed cores may not be used by this process."""
    code = "placement"


class Cancelled(BerthError):
    """The client was closed (from another thread or task) while a request
    waited for its reply; the request went with the connection."""
    code = "cancelled"


class ClientTimeout(BerthError):
    """No reply within the client's ``reply_timeout``. The connection and
    its leases are kept; the late reply is dropped when it comes."""
    code = "client_timeout"


ERRORS: Dict[str, Type[BerthError]] = {
    cls.code: cls for cls in (InvalidRequest, Unsatisfiable, WaitTimeout, NotFound,
                              Forbidden, TooLarge, ShuttingDown, UnsupportedVersion,
                              Busy, Internal)
}


def error_from_reply(reply: Mapping[str, Any]) -> BerthError:
    """The exception for an ``{"ok": false}`` reply: the class of its code,
    BerthError itself for a code this client does not know."""
    err = reply.get("error")
    if not isinstance(err, Mapping):
        return ProtocolError(f"berthd refused the request without an error: {reply!r}",
                             reply=reply)
    code = str(err.get("code", "error"))
    message = str(err.get("message", "(no message)"))
    cls = ERRORS.get(code)
    return cls(message, reply=reply) if cls else BerthError(message, code, reply)
