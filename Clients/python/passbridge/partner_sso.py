"""A partner single sign-on host: answers the daemon's ``partnerSSO/*`` requests (Protocol/README.md
"Partner single sign-on") from a small local "TV provider account" file, the way a set-top platform answers
for the TV-provider account it holds.

The account file is JSON::

    {
      "accessStatus": "granted",        # granted | denied | restricted | notDetermined
      "providerId": "MockSSO",          # the provider signed in at the platform (an MVPD's platformMappingId);
                                        # null: nobody is signed in
      "expiresAt": 1893456000000,       # when that sign-in ends, epoch milliseconds
                                        # (or "expiresInSeconds": 86400, counted from when the file is read)
      "username": "demo", "password": "demo",
      "samlEndpoint": "http://127.0.0.1:8080/__admin/partner-saml"   # optional, see below
    }

It is read again at every request, so editing it (signing out: ``"providerId": null``) takes effect at once.
The SAML attribute-query response a real platform gets from the provider comes, against ``pass-emulator``,
from its ``POST /__admin/partner-saml {providerId, username, password, request}`` (``samlEndpoint``, or the
``emulator_url`` given to the constructor). Usage::

    host = TVProviderAccount("account.json", emulator_url=emulator)
    ae.register_partner_sso(host)
    await ae.init(partnerSSO="Apple")
"""
import asyncio
import json
import pathlib
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, Union

from .delegate import PartnerSSOHost
from .errors import HostError

ACCESS_STATUSES = ("granted", "denied", "restricted", "notDetermined")


class TVProviderAccount(PartnerSSOHost):
    """The platform's TV-provider account, kept in a JSON file (see the module docstring)."""

    def __init__(self, path: Union[str, pathlib.Path], emulator_url: Optional[str] = None) -> None:
        self.path = pathlib.Path(path)
        self.emulator_url = emulator_url.rstrip("/") if emulator_url else None

    @staticmethod
    def write(path: Union[str, pathlib.Path], **account: Any) -> pathlib.Path:
        """Writes an account file (mode 0600: it holds the provider password) and returns its path."""
        path = pathlib.Path(path)
        path.touch(mode=0o600, exist_ok=True)
        path.write_text(json.dumps(account, indent=2) + "\n")
        return path

    def account(self) -> Dict[str, Any]:
        """The file's content; a file that cannot be read counts as the platform failing (reason ``other``)."""
        try:
            account = json.loads(self.path.read_text())
        except (OSError, ValueError) as e:
            raise HostError("other", f"TV provider account file {self.path}: {e}") from None
        if not isinstance(account, dict) or account.get("accessStatus", "granted") not in ACCESS_STATUSES:
            raise HostError("other", f"TV provider account file {self.path}: not an account")
        return account

    # ---- the two requests ---------------------------------------------------------------------------------

    def checkAccessStatus(self, prompt: bool) -> Dict[str, Any]:
        """``{accessStatus}`` from the file (no one to ask here, so ``prompt`` changes nothing)."""
        return {"accessStatus": self.account().get("accessStatus", "granted")}

    async def requestAccountMetadata(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """``{providerId, authenticationExpirationDate, samlAttributeQueryResponse?}``; nobody signed in answers
        ``providerId: null`` in the background and ``userCancelled`` when the user may be asked (this host has
        no picker of its own); a provider outside ``supportedProviderIds`` is ``unsupportedProvider``."""
        account = self.account()
        if account.get("accessStatus", "granted") != "granted":
            raise HostError("accessNotGranted", "the TV provider permission is not granted")
        provider = account.get("providerId")
        interactive = bool(params.get("interruptionAllowed"))
        if not provider:
            if interactive:
                raise HostError("userCancelled", "nobody is signed in with a TV provider on this platform")
            return {"providerId": None, "authenticationExpirationDate": None}
        supported = params.get("supportedProviderIds")
        if interactive and supported is not None and provider not in supported:
            raise HostError("unsupportedProvider", f"{provider} is not supported here", unsupportedProviderIdentifier=provider)
        result = {"providerId": provider, "authenticationExpirationDate": self._expiry(account)}
        token = params.get("verificationToken")
        if token:
            result["samlAttributeQueryResponse"] = await asyncio.to_thread(self._saml, account, provider, token)
        return result

    # ---- helpers ------------------------------------------------------------------------------------------

    def _expiry(self, account: Dict[str, Any]) -> int:
        if "expiresAt" in account:
            return int(account["expiresAt"])
        return int(time.time() * 1000) + int(account.get("expiresInSeconds", 86400)) * 1000

    def _saml(self, account: Dict[str, Any], provider: str, token: str) -> str:
        """The provider's SAML answer to ``token``, from the emulator's ``/__admin/partner-saml``."""
        endpoint = account.get("samlEndpoint") or (self.emulator_url and self.emulator_url + "/__admin/partner-saml")
        if not endpoint:
            raise HostError("serviceTemporarilyUnavailable", "no SAML endpoint for this account")
        body = json.dumps({"providerId": provider, "username": account.get("username", ""),
                           "password": account.get("password", ""), "request": token}).encode()
        request = urllib.request.Request(endpoint, data=body, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=8) as response:
                return str(json.loads(response.read())["samlResponse"])
        except urllib.error.HTTPError as e:
            reason = "providerRejected" if e.code == 401 else "invalidVerificationToken"
            raise HostError(reason, f"the provider refused: HTTP {e.code}") from None
        except (urllib.error.URLError, OSError, ValueError, KeyError) as e:
            raise HostError("serviceTemporarilyUnavailable", f"the provider did not answer: {e}") from None
