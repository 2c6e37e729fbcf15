"""Typed outcomes of the Pythonic API: one frozen dataclass per outcome, built from the daemon's result dicts.

The SDK-named methods (``checkAuthentication``, ``getAuthorization`` …) return the wire's dicts
(``passbridge.results``); the Pythonic ones (``check_authentication``, ``check_authorization``, ``authorize``,
``preauthorize``, ``metadata``, ``log_out``, ``login_web``, ``login_second_screen``) return these, or raise the
``EntitlementError`` of ``passbridge.errors``. Shapes: Protocol/openrpc.json; reasons: Protocol/README.md
"Failure reasons". ``from_result`` builds each from the dict, so code that keeps the SDK calls can use them too.
"""
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from .constants import METADATA_OPCODES, PROVIDER_NOT_SELECTED_ERROR, USER_NOT_AUTHENTICATED_ERROR, USER_NOT_AUTHORIZED_ERROR
from .errors import (AuthorizationFailed, EntitlementError, LoginCancelled, NotAuthenticated, NotAuthorized,
                     RequestorFailed)
from .results import PreauthorizeError, Status


def _statuses(result: Mapping[str, Any]) -> Tuple[Status, ...]:
    return tuple(result.get("statuses") or ())


@dataclass(frozen=True)
class Authentication:
    """The login state (``checkAuthentication``, a login's end, ``AuthenticationStatus`` on the wire):
    ``authenticated``; ``error_code`` ``""`` when authenticated, else Adobe's reason; ``statuses`` the reasons."""

    authenticated: bool
    error_code: str = ""
    statuses: Tuple[Status, ...] = ()

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> "Authentication":
        return cls(result.get("status") == 1, str(result.get("errorCode", "")), _statuses(result))

    def error(self) -> NotAuthenticated:
        """The exception that says why this state is not authenticated (``LoginCancelled`` for a cancel)."""
        kind = LoginCancelled if self.error_code == PROVIDER_NOT_SELECTED_ERROR else NotAuthenticated
        return kind(self.error_code or USER_NOT_AUTHENTICATED_ERROR, self.statuses)


@dataclass(frozen=True)
class MediaToken:
    """Authorization granted: ``token`` is the short media token (base64 text) for ``resource``; ``statuses`` are
    advisory (Z011 TempPass, Z010 degradation) when any."""

    resource: str
    token: str
    statuses: Tuple[Status, ...] = ()


@dataclass(frozen=True)
class AuthorizationFailure:
    """Authorization refused or failed for ``resource``: ``error_code`` (Adobe's), ``description`` (the
    ``errorDescription``: the MVPD's message or ``""``), ``statuses`` (Z100 MVPD deny, N130 profile gone, Z500…)."""

    resource: str
    error_code: str
    description: str = ""
    statuses: Tuple[Status, ...] = ()

    def error(self) -> EntitlementError:
        """``NotAuthorized`` (the MVPD said no), ``NotAuthenticated``/``LoginCancelled`` (no valid login) or
        ``AuthorizationFailed`` (anything else)."""
        if self.error_code == USER_NOT_AUTHORIZED_ERROR:
            return NotAuthorized(self.resource, self.error_code, self.description, self.statuses)
        if self.error_code in (USER_NOT_AUTHENTICATED_ERROR, PROVIDER_NOT_SELECTED_ERROR) or "Authentication" in self.error_code:
            error = Authentication(False, self.error_code, self.statuses).error()
            error.resource = self.resource
            return error
        return AuthorizationFailed(self.resource, self.error_code, self.description, self.statuses)


Authorization = Union[MediaToken, AuthorizationFailure]


def authorization_from_result(resource: str, result: Mapping[str, Any]) -> Authorization:
    """The ``Authorization`` of a ``checkAuthorization``/``getAuthorization`` result; a getAuthorization whose
    login failed is an ``AuthorizationFailure`` with that login's code (also from a daemon that answered it in the
    login's ``{status: 0, errorCode}`` shape)."""
    if result.get("token"):
        return MediaToken(str(result.get("resource", resource)), str(result["token"]), _statuses(result))
    return AuthorizationFailure(str(result.get("resource", resource)), str(result.get("errorCode", "")),
                                str(result.get("errorDescription", "")), _statuses(result))


@dataclass(frozen=True)
class Preauthorization:
    """``preauthorize`` (the iOS SDK's): ``authorized`` the resources the user may watch (UI decoration only: playing
    needs ``authorize``), ``denied`` the rest of those asked about, in the order asked; ``errors`` why each denied
    one was refused (REST API V2's error object, ``PreauthorizeError``; none for a plain "no"); ``failure`` the
    error of a request that failed before any decision (``authentication_session_missing`` when nobody is logged
    in…), which every resource then carries."""

    authorized: Tuple[str, ...]
    denied: Tuple[str, ...] = ()
    errors: Mapping[str, PreauthorizeError] = field(default_factory=dict)
    failure: Optional[PreauthorizeError] = None

    @classmethod
    def from_result(cls, asked: Sequence[str], result: Mapping[str, Any]) -> "Preauthorization":
        decisions = {d["id"]: d for d in result.get("decisions") or ()}
        ok = tuple(r for r in dict.fromkeys(asked) if decisions.get(r, {}).get("authorized") is True)
        errors = {r: decisions[r]["error"] for r in dict.fromkeys(asked) if "error" in decisions.get(r, {})}
        return cls(ok, tuple(r for r in dict.fromkeys(asked) if r not in ok), errors, result.get("status"))


@dataclass(frozen=True)
class Metadata:
    """``getMetadata``: ``key`` the op code's number (0 authentication expiry, 1 authorization expiry, 2 device
    id, 3 user attribute), ``value`` (epoch ms for 0/1, the result's ``expires``; a string for 2, any JSON value for
    3, ``None`` when there is none), ``encrypted`` (a user attribute the MVPD encrypted), ``arguments`` as sent,
    ``statuses`` why ``value`` is ``None`` when something failed (a failed setRequestor's reasons, STORE500)."""

    key: int
    value: Any
    encrypted: bool = False
    arguments: Mapping[str, Any] = field(default_factory=dict)
    statuses: Tuple[Status, ...] = ()

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> "Metadata":
        key = result.get("key")
        number = int(key) if isinstance(key, int) else METADATA_OPCODES.get(str(key), -1)
        value = result.get("expires") if number in (0, 1) else result.get("metadata")
        return cls(number, value, bool(result.get("encrypted")), dict(result.get("arguments") or {}), _statuses(result))


@dataclass(frozen=True)
class Logout:
    """``logout`` ended (always logged out here): ``statuses`` are its reasons when the backend part failed
    (e.g. the failed setRequestor's), ``sign_out_of_platform`` when VSA203 asks the user to also sign out of the
    TV provider in the platform's settings (partner single sign-on)."""

    statuses: Tuple[Status, ...] = ()
    sign_out_of_platform: bool = False


@dataclass(frozen=True)
class RegistrationCode:
    """The second screen's code (status REGCODE, then REG100 countdown updates): show ``code`` and ``url``.

    ``url`` is the page the daemon says to show on the other device (the REGCODE's ``url``: the configured
    activation page with the code filled in, else the direct authenticate URL); ``authenticate_url`` is the direct
    ``…/api/v2/authenticate/{serviceProvider}/{code}`` a phone can open as is (Protocol/README.md, "Second
    screen"), ``activation_url`` the configured activation page (None when there is none). ``not_after`` is the
    code's expiry in epoch ms; ``seconds_left`` the seconds until then (from the REG100 update, else computed from
    ``not_after`` when the REGCODE arrived); ``update`` is False for the first call and True for each countdown
    update."""

    code: str
    url: str
    authenticate_url: str
    not_after: Optional[int]
    seconds_left: Optional[int]
    update: bool = False
    activation_url: Optional[str] = None

    @classmethod
    def from_status(cls, status: Mapping[str, Any], now_ms: float) -> "RegistrationCode":
        url = str(status.get("url") or status.get("authenticateUrl") or "")
        not_after = status.get("notAfter")
        left = max(0, int((not_after - now_ms) // 1000)) if isinstance(not_after, (int, float)) else None
        activation = status.get("activationUrl")
        return cls(str(status.get("code", "")), url, str(status.get("authenticateUrl") or url),
                   int(not_after) if isinstance(not_after, (int, float)) else None, left,
                   activation_url=str(activation) if activation else None)

    def updated(self, status: Mapping[str, Any]) -> "RegistrationCode":
        """This code with a REG100 update's ``notAfter`` and ``secondsLeft``."""
        not_after = status.get("notAfter", self.not_after)
        left = status.get("secondsLeft", self.seconds_left)
        return RegistrationCode(str(status.get("code") or self.code), self.url, self.authenticate_url,
                                int(not_after) if isinstance(not_after, (int, float)) else None,
                                int(left) if isinstance(left, (int, float)) else None, True, self.activation_url)


def requestor_outcome(result: Mapping[str, Any]) -> None:
    """Raises ``RequestorFailed`` for a failed ``setRequestor`` result."""
    if result.get("status") != 1:
        raise RequestorFailed("", _statuses(result), "setRequestor failed")


__all__ = ["Authentication", "Authorization", "AuthorizationFailure", "Logout", "MediaToken", "Metadata",
           "Preauthorization", "RegistrationCode", "authorization_from_result", "requestor_outcome"]
