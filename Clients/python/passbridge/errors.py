"""Exceptions raised by the PassBridge client, and the one a host raises to refuse a daemon request."""
from typing import Any, Optional


class RPCError(Exception):
    """A JSON-RPC error object received in answer to a request.

    ``code`` is the JSON-RPC code (-32700…-32603 for protocol faults, -32000…-32099 for the daemon's own:
    -32002 requestor not set, -32003 shutting down, -32004 overloaded or message too large; see
    Protocol/openrpc.json), ``message`` its text and ``data`` the optional ``data`` member (a dict for daemon
    errors, e.g. naming the bad param of a -32602).
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(ConnectionError):
    """The daemon closed the connection (or exited) while a request was waiting for its answer."""


class HostError(Exception):
    """Raised by a host-side request handler to answer a daemon→host request with a JSON-RPC error.

    ``reason`` is one of the partner-SSO reasons of DESIGN §3 (``accessNotGranted``, ``unsupportedProvider``,
    ``userCancelled``, ``serviceTemporarilyUnavailable``, ``providerRejected``, ``invalidVerificationToken``,
    ``other``); extra keyword arguments are added to the error's ``data`` (for example
    ``unsupportedProviderIdentifier="X"``).
    """

    def __init__(self, reason: str, message: Optional[str] = None, code: int = -32000, **data: Any) -> None:
        super().__init__(message or reason)
        self.code = code
        self.message = message or reason
        self.data = {"reason": reason, **data}
