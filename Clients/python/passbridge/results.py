"""The shapes of the daemon's results and notification params, as ``TypedDict``s (Protocol/openrpc.json).

A type checker sees ``ae.getAuthorization("ch1")`` return an ``AuthorizationResult``; at run time every value is
a plain ``dict``. Members this version does not list may appear in newer daemons.
"""
from typing import Any, Dict, List, Optional, TypedDict


class _StatusRequired(TypedDict):
    id: str
    errorId: str
    level: str


class Status(_StatusRequired, total=False):
    """A ``status`` notification: ``id`` (N000, Z100, R400, CFG400, REGCODE, PB404…; ``errorId`` is the same, the
    iOS SDK's name for it), ``level`` (info, warning,
    error), and whichever of ``message``, ``details``, ``resource`` the status has; REGCODE adds ``code``, ``url``
    (the activation page), ``notAfter`` (epoch milliseconds) and, from daemons that send them, ``authenticateUrl``
    (a page that takes the code directly) and ``activationUrl``; the countdown status REG100 has ``code``,
    ``notAfter`` and ``secondsLeft``."""

    message: str
    details: str
    resource: str
    code: str
    url: str
    notAfter: int
    authenticateUrl: str
    activationUrl: str
    secondsLeft: int


class _SetRequestorRequired(TypedDict):
    status: int


class SetRequestorResult(_SetRequestorRequired, total=False):
    """``setRequestor``: ``status`` 1 success, 0 failure; on failure ``statuses`` says why (R400, CFG400…)."""

    statuses: List[Status]


class _AuthenticationRequired(TypedDict):
    status: int
    errorCode: str


class AuthenticationStatus(_AuthenticationRequired, total=False):
    """The login family: ``status`` 1 authenticated (``errorCode`` ""), 0 not (``errorCode`` says which);
    ``statuses`` when the outcome failed for a reason (Protocol/README.md "Failure reasons")."""

    statuses: List[Status]


class AuthorizationResult(TypedDict, total=False):
    """``checkAuthorization`` / ``getAuthorization``: ``{token, resource}`` (the short media token) when granted,
    else ``{resource, errorCode, errorDescription (the MVPD's message or ""), statuses? (Z100…)}``; a
    ``getAuthorization`` whose login failed or was cancelled ends in the failure shape with that login's
    ``errorCode`` (e.g. "Provider not Selected Error") and an empty ``errorDescription``."""

    token: str
    resource: str
    errorCode: str
    errorDescription: str
    status: int
    statuses: List[Status]


class SelectionResult(TypedDict, total=False):
    """``setSelectedProvider``: ``{}`` once the login started, else the ending ``AuthenticationStatus``."""

    status: int
    errorCode: str
    statuses: List[Status]


class MVPD(TypedDict):
    """An MVPD of the requestor's configuration (``displayProviderDialog``, ``getSelectedProvider``)."""

    ID: str
    displayName: str
    logoURL: Optional[str]
    enablePlatformServices: bool
    boardingStatus: Optional[str]
    displayInPlatformPicker: bool
    platformMappingId: Optional[str]
    isTempPass: bool
    requiresSVC: bool


class SelectedProviderResult(TypedDict):
    """``getSelectedProvider``: the current MVPD or ``None``."""

    mvpd: Optional[MVPD]


class _PreauthorizedRequired(TypedDict):
    resources: List[str]


class PreauthorizedResult(_PreauthorizedRequired, total=False):
    """``checkPreauthorizedResources``: the resources the user may watch; ``statuses`` when something said why the
    list may be short (P100, Z010, STORE500; the failed setRequestor's reasons with no requestor configured)."""

    statuses: List[Status]


class _MetadataRequired(TypedDict):
    metadata: Any
    encrypted: bool
    key: int
    arguments: Dict[str, Any]


class MetadataResult(_MetadataRequired, total=False):
    """``getMetadata``: ``metadata`` is an expiry as the SDK's date string, ``"2026/12/01 18:45:00 GMT +0000"`` (op
    codes 0, 1; ``expires`` is the same instant in epoch ms), the device id (2) or the user attribute (3), ``None``
    when there is none; ``encrypted``, ``key`` (the op code's number), ``arguments``."""

    expires: int


class _PreauthorizeErrorRequired(TypedDict):
    status: int
    code: str
    action: str


class PreauthorizeError(_PreauthorizeErrorRequired, total=False):
    """REST API V2's error object of a refused ``preauthorize`` decision (``status`` its HTTP status), or the
    daemon's for what never reached the backend (``status`` 0: ``network_error``, ``authentication_session_missing``…)."""

    message: str
    details: str


class _PreauthorizeDecisionRequired(TypedDict):
    id: str
    authorized: bool


class PreauthorizeDecision(_PreauthorizeDecisionRequired, total=False):
    """One resource's decision; ``error`` says why it was refused."""

    error: PreauthorizeError


class _PreauthorizeResponseRequired(TypedDict):
    decisions: List[PreauthorizeDecision]


class PreauthorizeResponse(_PreauthorizeResponseRequired, total=False):
    """``preauthorize`` (``call("preauthorize", {"resources": [...], "disableFeatures": ["LOCAL_CACHE"]})``): a decision per
    resource, in the order asked; ``status`` when the whole request failed."""

    status: PreauthorizeError


class Empty(TypedDict):
    """``init`` and ``setOptions``: ``{}``."""


__all__ = [
    "AuthenticationStatus", "AuthorizationResult", "Empty", "MVPD", "MetadataResult", "PreauthorizeDecision",
    "PreauthorizeError", "PreauthorizeResponse", "PreauthorizedResult",
    "SelectedProviderResult", "SelectionResult", "SetRequestorResult", "Status",
]
