"""Exceptions raised by the PassBridge client, and the one a host raises to refuse a daemon request."""
from typing import Any, Optional

from .rpc import RPCError

#: Raised when the daemon closed the connection (or exited) while a call was waiting for its answer.
ConnectionClosed = ConnectionError


class HostError(RPCError):
    """Raised by a host-side request handler to answer a daemon→host request with a JSON-RPC error.

    ``reason`` is one of the partner-SSO reasons of DESIGN §3 (``accessNotGranted``, ``unsupportedProvider``,
    ``userCancelled``, ``serviceTemporarilyUnavailable``, ``providerRejected``, ``invalidVerificationToken``,
    ``other``); extra keyword arguments are added to the error's ``data`` (for example
    ``unsupportedProviderIdentifier="X"``). ``RPCError`` (``code``, ``message``, ``data``) is the same class
    as ``passbridge.rpc.RPCError``: a JSON-RPC error object received from, or sent to, the daemon.
    """

    def __init__(self, reason: str, message: Optional[str] = None, code: int = -32000, **data: Any) -> None:
        super().__init__(code, message or reason, {"reason": reason, **data})
        self.reason = reason


__all__ = ["ConnectionClosed", "HostError", "RPCError"]
