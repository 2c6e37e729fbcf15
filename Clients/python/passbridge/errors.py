"""The exceptions of the PassBridge client, all rooted at ``passbridge.Error``.

* ``RPCError`` — the daemon answered a request with a JSON-RPC error object (``code``, ``message``, ``data``);
  ``HostError`` is the one a host raises to refuse a daemon→host request.
* ``ConnectionClosed`` — the connection is closed: ``close()`` was called, or the daemon went away.
  ``DaemonExited`` says the spawned daemon ended with a non-zero exit status and carries its last stderr lines.
* ``Timeout`` — no answer within the call's timeout.
* ``DaemonNotFound`` — ``spawn()`` found no daemon to start; the message lists where it looked and what to install.
* ``EntitlementError`` — raised only by the Pythonic helpers (``authorize``, ``login_web``,
  ``login_second_screen``, ``set_requestor``) when the outcome failed; it carries Adobe's ``error_code`` and the
  outcome's ``statuses`` (the reasons). ``NotAuthorized`` (the MVPD said no), ``NotAuthenticated`` (no valid
  login; ``LoginCancelled`` when the login was cancelled), ``AuthorizationFailed`` (any other authorization
  failure) and ``RequestorFailed`` (setRequestor failed) derive from it. The SDK-named methods never raise them:
  they return the outcome as a dict.

``ConnectionClosed`` is also a ``ConnectionError`` and ``Timeout`` a ``TimeoutError``, so code written for the
builtin exceptions keeps working; catching ``ConnectionClosed`` does not catch ``ConnectionRefusedError``.
``DaemonNotFound`` is also a ``FileNotFoundError``, what ``spawn()`` raised before it existed.
"""
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple


class Error(Exception):
    """Base class of every exception the PassBridge client raises."""


class RPCError(Error):
    """A JSON-RPC error object: ``code`` (int), ``message`` (str), ``data`` (any JSON value or ``None``).

    Codes (Protocol/README.md "Errors"): -32601 unknown method, -32602 invalid params (``data`` names the
    ``param``, the ``reason`` and for an unknown name the ``closest`` known one), -32002 no setRequestor yet,
    -32003 the daemon is shutting down, -32004 overloaded.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}" + (f" {json.dumps(data)}" if data is not None else ""))
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> Dict[str, Any]:
        """The error object as sent on the wire."""
        error: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class HostError(RPCError):
    """Raised by a host-side request handler to answer a daemon→host request with a JSON-RPC error.

    ``reason`` is one of the partner single sign-on reasons of Protocol/README.md (``accessNotGranted``,
    ``unsupportedProvider``, ``userCancelled``, ``serviceTemporarilyUnavailable``, ``providerRejected``,
    ``invalidVerificationToken``, ``other``); extra keyword arguments are added to the error's ``data`` (for
    example ``unsupportedProviderIdentifier="X"``).
    """

    def __init__(self, reason: str, message: Optional[str] = None, code: int = -32000, **data: Any) -> None:
        super().__init__(code, message or reason, {"reason": reason, **data})
        self.reason = reason


class ConnectionClosed(Error, ConnectionError):
    """The connection is closed (by ``close()`` or by the daemon); the call did not get an answer. From a login
    helper (``login_web``, ``login_second_screen``, ``authorize``), also a login ended because the daemon is
    stopping or the connection ending: ``statuses`` then holds its N005, whose details are ``INSTANCE_CLOSED``."""

    statuses: Tuple[Dict[str, Any], ...] = ()


class DaemonExited(ConnectionClosed):
    """The spawned daemon exited with ``returncode`` (non-zero); ``stderr`` holds its last lines of output."""

    def __init__(self, returncode: int, stderr: Sequence[str] = ()) -> None:
        self.returncode = returncode
        self.stderr = list(stderr)
        detail = f": {self.stderr[-1]}" if self.stderr else ""
        super().__init__(f"the daemon exited with status {returncode}{detail}")


#: What the message of ``DaemonNotFound`` says to install.
INSTALL_HINT = ("install the wheel that carries the daemon (pip install passbridge-VERSION-py3-none-linux_x86_64.whl, "
                "built by Clients/python/build-wheel.sh) or the Debian package (apt install ./passbridge_VERSION_amd64.deb, "
                "built by Clients/debian/build-deb.sh), or build it (swift build -c release) and pass executable= "
                "or set PASSBRIDGE to its path")


class DaemonNotFound(Error, FileNotFoundError):
    """``spawn()`` found no ``passbridge`` daemon; ``looked`` lists each place tried, in order."""

    def __init__(self, looked: Sequence[str]) -> None:
        self.looked = list(looked)
        super().__init__(f"passbridge daemon not found; looked at: {'; '.join(self.looked)}. To fix: {INSTALL_HINT}")

    def __str__(self) -> str:
        return str(self.args[0])


class Timeout(Error, TimeoutError):
    """No answer within the call's timeout (the request may still complete in the daemon)."""


#: The JSON-RPC error code of a request cancelled by ``$/cancelRequest`` (Protocol/README.md).
REQUEST_CANCELLED = -32800


class EntitlementError(Error):
    """A failed outcome, raised by the Pythonic helpers: ``error_code`` is Adobe's (``"User not Authorized
    Error"``, ``"User Not Authenticated Error"``, ``"Provider not Selected Error"``…), ``statuses`` the outcome's
    reasons (``status`` dicts ``{id, level, message?, details?, resource?}``, Protocol/README.md "Failure
    reasons"; empty when there is none, e.g. N000 not logged in)."""

    #: The resource of an authorization outcome (``None`` for a login or setRequestor).
    resource: Optional[str] = None

    def __init__(self, error_code: str, statuses: Sequence[Any] = (), message: Optional[str] = None) -> None:
        self.error_code = error_code
        self.statuses: List[Any] = list(statuses)
        text = message or error_code
        if self.reasons:
            text += f" ({'; '.join(self.reasons)})"
        super().__init__(text)

    @property
    def reasons(self) -> List[str]:
        """Each status as ``"ID message"`` (``"Z100 Channel 2 is not in your package"``)."""
        return [" ".join(str(part) for part in (s.get("id"), s.get("message")) if part) for s in self.statuses]


class RequestorFailed(EntitlementError):
    """``setRequestor`` failed (``error_code`` is ``""``): ``statuses`` says why (R400 no software statement,
    CFG400 unknown requestor, CFG404 backend not reachable…)."""


class NotAuthenticated(EntitlementError):
    """No valid login: ``error_code`` is Adobe's reason (``"User Not Authenticated Error"`` not logged in or the
    profile expired (N130), ``"Generic Authentication Error"``, ``"Provider not Available Error"``…)."""


class LoginCancelled(NotAuthenticated):
    """The login was cancelled (``"Provider not Selected Error"``): at the provider dialog, by the page, by
    ``$/cancelRequest``, or with an MVPD id the dialog did not offer (status PB404)."""


class AuthorizationError(EntitlementError):
    """An authorization that failed for ``resource``; ``description`` is the ``errorDescription`` of the
    outcome (the MVPD's message, or ``""``)."""

    def __init__(self, resource: str, error_code: str, description: str = "", statuses: Sequence[Any] = ()) -> None:
        self.resource = resource
        self.description = description
        super().__init__(error_code, statuses, f"{resource}: {error_code}" + (f": {description}" if description else ""))


class NotAuthorized(AuthorizationError):
    """The MVPD denied ``resource`` (``"User not Authorized Error"``, status Z100, or Z110 repeated attempts, Z169
    degradation, Z130 bad resource): ``mvpd_message`` is what the MVPD said (the Z100 ``details``, else
    ``errorDescription``)."""

    @property
    def mvpd_message(self) -> str:
        for s in self.statuses:
            if s.get("id") in ("Z100", "Z110", "Z169", "Z130") and s.get("details"):
                return str(s["details"])
        return self.description


class AuthorizationFailed(AuthorizationError):
    """Any other authorization failure (``"Generic Authorization Error"``, ``"Internal Authorization Error"``;
    statuses Z120 the MVPD could not be reached, Z500, R401, Z100 too many requests, STORE500…)."""


__all__ = ["AuthorizationError", "AuthorizationFailed", "ConnectionClosed", "DaemonExited", "DaemonNotFound",
           "EntitlementError", "Error", "HostError", "LoginCancelled", "NotAuthenticated", "NotAuthorized",
           "REQUEST_CANCELLED", "RPCError", "RequestorFailed", "Timeout"]
