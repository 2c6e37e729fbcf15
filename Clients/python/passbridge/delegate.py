"""The EntitlementDelegate callbacks: a handler class to subclass, and the event value of the event streams.

Every daemon notification (Protocol/README.md) is one callback. The client calls the delegate method of the same name
with the notification's params as positional arguments in the SDK's order (table ``CALLBACKS``); a param the
daemon left out arrives as ``None``, params it adds to the SDK's (table ``EXTRAS``: setMetadataStatus's ``expires``)
come by keyword to a method that declares them, and params this version does not know are ignored. ``status`` receives the
whole status dictionary (``{id, level, message?, details?, resource?}``; for second screen
``{id: "REGCODE", level, code, url, authenticateUrl, activationUrl?, notAfter}``).
"""
import inspect
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .results import MVPD, Status

#: notification name → the names of its params, in the order the delegate method takes them.
CALLBACKS: Dict[str, Tuple[str, ...]] = {
    "setRequestorComplete": ("status",),
    "setAuthenticationStatus": ("status", "errorCode"),
    "displayProviderDialog": ("mvpds",),
    "navigateToUrl": ("url", "useSVC"),
    "setToken": ("token", "resource"),
    "tokenRequestFailed": ("resource", "errorCode", "errorDescription"),
    "preauthorizedResources": ("resources",),
    "selectedProvider": ("mvpd",),
    "setMetadataStatus": ("metadata", "encrypted", "key", "arguments"),
    "sendTrackingData": ("data", "eventType"),
    "presentTvProviderDialog": (),
    "dismissTvProviderDialog": (),
}

#: notification name → params the daemon adds to the SDK's, passed by keyword to a delegate method that takes them
#: (so that a method written with the SDK's params alone keeps working).
EXTRAS: Dict[str, Tuple[str, ...]] = {
    "setMetadataStatus": ("expires",),
}


@dataclass(frozen=True)
class Event:
    """One notification from the daemon: ``name`` (e.g. ``"setToken"``) and its ``params`` dict.

    ``event["token"]`` reads a param (``None`` if absent).
    """

    name: str
    params: Dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.params.get(key)


def callback_args(event: Event) -> List[Any]:
    """The positional arguments the delegate method for ``event`` receives."""
    if event.name == "status":
        return [dict(event.params)]
    names = CALLBACKS.get(event.name)
    if names is None:
        return [dict(event.params)]
    return [event.params.get(n) for n in names]


def invoke(delegate: Any, event: Event) -> Any:
    """Calls ``delegate``'s method for ``event`` (or its ``onNotification``); returns what it returned."""
    fn = getattr(delegate, event.name, None) if not event.name.startswith("_") else None
    if fn is None:
        fallback = getattr(delegate, "onNotification", None)
        return fallback(event.name, dict(event.params)) if fallback is not None else None
    return fn(*callback_args(event), **{n: event.params.get(n) for n in EXTRAS.get(event.name, ()) if _takes(fn, n)})


def _takes(fn: Any, name: str) -> bool:
    """Whether ``fn`` takes a keyword argument ``name`` (by that name, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.kind == p.VAR_KEYWORD
               for p in parameters)


class EntitlementDelegate:
    """Subclass and override the callbacks you need; the others do nothing.

    Methods may be plain functions or coroutines. With ``AsyncAccessEnabler`` a plain method runs at once, in
    arrival order, before the response that ends its operation is delivered; a coroutine method is started as
    a task at that moment (so it may itself await client calls, e.g. ``setSelectedProvider`` from
    ``displayProviderDialog``). With the blocking ``AccessEnabler`` every method runs on the thread that is
    waiting in a client call, and may call the client again.
    A notification with no method here goes to ``onNotification(name, params)``.

    ``client`` is the client this delegate was given to: ``spawn``/``connect`` set it (the ``AsyncAccessEnabler``
    or the blocking ``AccessEnabler``) unless it already holds a value, so callbacks can call
    ``self.client.setSelectedProvider(...)`` with no global. While a Pythonic helper (``login_web``,
    ``login_second_screen``, ``log_out`` with ``open_url``) answers the provider dialog or the page itself, the
    delegate's ``displayProviderDialog`` / ``navigateToUrl`` are not called.
    """

    #: The client this delegate belongs to (set by the client; ``Any``: async or blocking).
    client: Any = None

    def setRequestorComplete(self, status: int) -> Any:
        """``setRequestor`` ended: 1 success, 0 failure."""

    def setAuthenticationStatus(self, status: int, errorCode: str) -> Any:
        """Authentication state: 1 authenticated (errorCode ""), 0 not (errorCode says why)."""

    def displayProviderDialog(self, mvpds: List[MVPD]) -> Any:
        """Show the MVPD picker; answer with ``setSelectedProvider(id)`` or ``setSelectedProvider(None)``.

        Each MVPD is ``{ID, displayName, logoURL, enablePlatformServices, boardingStatus,
        displayInPlatformPicker, platformMappingId, isTempPass}``.
        """

    def navigateToUrl(self, url: str, useSVC: Optional[bool]) -> Any:
        """Open ``url`` in a web view; when it redirects to the redirect URL, call ``handleExternalURL``."""

    def setToken(self, token: str, resource: str) -> Any:
        """Authorization granted: ``token`` is the short media token (base64) for ``resource``."""

    def tokenRequestFailed(self, resource: str, errorCode: str, errorDescription: str) -> Any:
        """Authorization refused or failed for ``resource``; ``errorDescription`` is the MVPD's message or ""."""

    def preauthorizedResources(self, resources: List[str]) -> Any:
        """Answer to ``checkPreauthorizedResources``: the ids that are authorized."""

    def selectedProvider(self, mvpd: Optional[MVPD]) -> Any:
        """Answer to ``getSelectedProvider``: the MVPD object or ``None``."""

    def setMetadataStatus(self, metadata: Any, encrypted: bool, key: int, arguments: Dict[str, Any],
                          expires: Optional[int] = None) -> Any:
        """Answer to ``getMetadata``: for key 0/1 the expiry as the SDK's date string (``"2026/12/01 18:45:00 GMT
        +0000"``) and ``expires`` the same instant in epoch ms (``None`` when there is no expiry); the device id for 2,
        the attribute value for 3."""

    def sendTrackingData(self, data: List[Any], eventType: int) -> Any:
        """Analytics: ``eventType`` 0 authentication, 1 authorization, 2 MVPD selection; ``data`` strings."""

    def presentTvProviderDialog(self) -> Any:
        """The platform's provider dialog is about to show (partner SSO)."""

    def dismissTvProviderDialog(self) -> Any:
        """The platform's provider dialog is gone."""

    def status(self, status: Status) -> Any:
        """Advanced status (``N000``, ``Z100``, ``REGCODE``…): ``{id, level, message?, details?, resource?}``;
        REGCODE adds ``code``, ``url``, ``authenticateUrl``, ``activationUrl`` (when configured) and ``notAfter``
        (epoch ms), REG100 (countdown) ``code``, ``notAfter`` and ``secondsLeft``."""

    def onNotification(self, name: str, params: Dict[str, Any]) -> Any:
        """Any notification this class has no method for (forward compatibility)."""


class PartnerSSOHost:
    """The host side of the daemon→host partner-SSO requests (Protocol/README.md "Partner single sign-on");
    subclass and override both.

    Register it with ``client.register_partner_sso(host)`` and send ``init(partnerSSO="...")``. To refuse,
    raise ``passbridge.HostError(reason)``. Methods may be plain or coroutines.
    """

    def checkAccessStatus(self, prompt: bool) -> Any:
        """Return ``{"accessStatus": "granted" | "denied" | "restricted" | "notDetermined"}`` (or a coroutine
        that does)."""
        return {"accessStatus": "notDetermined"}

    def requestAccountMetadata(self, params: Dict[str, Any]) -> Any:
        """``params``: ``interruptionAllowed``, ``verificationToken?``, ``attributeNames?``,
        ``supportedProviderIds?``, ``featuredProviderIds?``. Return ``{providerId,
        authenticationExpirationDate (epoch ms), samlAttributeQueryResponse?}``."""
        from .errors import HostError

        raise HostError("other", "no partner account on this host")


#: The callbacks a login waits on: the call that started it is answered only after the host acts on them.
USER_STEPS = ("displayProviderDialog", "navigateToUrl")


def handles(delegate: Any, name: str) -> bool:
    """Whether ``delegate`` has its own method for notification ``name`` (or its own ``onNotification``)."""
    if delegate is None:
        return False
    cls = type(delegate)
    if getattr(cls, "onNotification", None) not in (None, EntitlementDelegate.onNotification):
        return True
    own = getattr(cls, name, None)
    return own is not None and own is not getattr(EntitlementDelegate, name, None)
