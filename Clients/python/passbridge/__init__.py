"""PassBridge client: drive Adobe Pass's AccessEnabler, hosted by the ``passbridge`` daemon, from Python.

``AsyncAccessEnabler`` (asyncio) and ``AccessEnabler`` (blocking) spawn the daemon over stdio or connect to
its Unix socket; their methods carry the SDK's names and return the response's ``result`` (typed by the
``TypedDict``s of ``passbridge.results``); the SDK's ``EntitlementDelegate`` callbacks arrive as methods of your
``EntitlementDelegate`` subclass and as an async event stream (``client.events()``). Every exception the
client raises is a ``passbridge.Error``.

On top of that SDK-shaped API, Pythonic methods return typed outcomes (``passbridge.outcomes``: ``Authentication``,
``MediaToken``/``AuthorizationFailure``, ``Preauthorization``, ``Metadata``, ``Logout``) and raise an
``EntitlementError`` (``NotAuthorized``, ``NotAuthenticated``, ``LoginCancelled``…) when the outcome failed:
``set_requestor``, ``check_authentication``, ``authorize``, ``login_web``, ``login_second_screen``, ``log_out``. The ``passbridge.wire`` logger traces every message at DEBUG.
See README.md and the daemon's Protocol/README.md for the wire contract.
"""
from .client import DEFAULT_TIMEOUT, WAITS_ON_USER, AsyncAccessEnabler, EventStream
from .constants import *  # noqa: F401,F403  (status, error and op-code constants)
from .delegate import CALLBACKS, EntitlementDelegate, Event, PartnerSSOHost
from .errors import (REQUEST_CANCELLED, AuthorizationError, AuthorizationFailed, ConnectionClosed, DaemonExited,
                     DaemonNotFound, EntitlementError, Error, HostError, LoginCancelled, NotAuthenticated, NotAuthorized,
                     RequestorFailed, RPCError, Timeout)
from .flows import ChooseMVPD, OpenURL, ShowCode
from .locate import find_daemon
from .outcomes import (Authentication, Authorization, AuthorizationFailure, Logout, MediaToken, Metadata,
                       Preauthorization, RegistrationCode)
from .results import (MVPD, AuthenticationStatus, AuthorizationResult, MetadataResult, PreauthorizedResult,
                      SelectedProviderResult, SelectionResult, SetRequestorResult, Status)
from .sync import AccessEnabler

#: PassBridge's version: a copy of ``info.version`` in Protocol/openrpc.json, which Tests/python/test_packages.py
#: keeps equal (the wheel's metadata is read from that file by build-wheel.sh).
__version__ = "1.0.0"
__all__ = [
    "Authentication", "Authorization", "AuthorizationError", "AuthorizationFailed", "AuthorizationFailure",
    "ChooseMVPD", "EntitlementError", "LoginCancelled", "Logout", "MediaToken", "Metadata", "NotAuthenticated",
    "NotAuthorized", "OpenURL", "Preauthorization", "REQUEST_CANCELLED", "RegistrationCode", "RequestorFailed",
    "ShowCode",
    "AccessEnabler", "AsyncAccessEnabler", "AuthenticationStatus", "AuthorizationResult", "CALLBACKS",
    "ConnectionClosed", "DEFAULT_TIMEOUT", "DaemonExited", "DaemonNotFound", "EntitlementDelegate", "Error", "Event", "EventStream",
    "HostError", "MVPD", "MetadataResult", "PartnerSSOHost", "PreauthorizedResult", "RPCError",
    "SelectedProviderResult", "SelectionResult", "SetRequestorResult", "Status", "Timeout", "WAITS_ON_USER",
    "find_daemon",
]
