"""PassBridge client: drive Adobe Pass's AccessEnabler, hosted by the ``passbridge`` daemon, from Python.

``AsyncAccessEnabler`` (asyncio) and ``AccessEnabler`` (blocking) spawn the daemon over stdio or connect to
its Unix socket; their methods carry the SDK's names and return the response's ``result``; the SDK's
``EntitlementDelegate`` callbacks arrive as methods of your ``EntitlementDelegate`` subclass and as an async
event stream (``client.events()``). See README.md and Protocol/ for the wire contract.
"""
from .client import AsyncAccessEnabler, EventStream
from .constants import *  # noqa: F401,F403  (status, error and op-code constants)
from .delegate import CALLBACKS, EntitlementDelegate, Event, PartnerSSOHost
from .errors import ConnectionClosed, HostError, RPCError
from .sync import AccessEnabler

__version__ = "0.1.0"
__all__ = [
    "AccessEnabler", "AsyncAccessEnabler", "CALLBACKS", "ConnectionClosed", "EntitlementDelegate", "Event",
    "EventStream", "HostError", "PartnerSSOHost", "RPCError",
]
