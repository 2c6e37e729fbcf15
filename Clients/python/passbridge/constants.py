"""AccessEnabler constants as they appear on the wire (Protocol/README.md "Values"): statuses, error codes,
metadata op-codes."""

#: ``status`` of ``setRequestorComplete`` / ``setAuthenticationStatus``: success.
ACCESS_ENABLER_STATUS_SUCCESS = 1
#: ``status``: failure (also what a finished logout reports).
ACCESS_ENABLER_STATUS_ERROR = 0

USER_AUTHENTICATED = ""
USER_NOT_AUTHENTICATED_ERROR = "User Not Authenticated Error"
PROVIDER_NOT_SELECTED_ERROR = "Provider not Selected Error"
USER_NOT_AUTHORIZED_ERROR = "User not Authorized Error"
GENERIC_AUTHENTICATION_ERROR = "Generic Authentication Error"
GENERIC_AUTHORIZATION_ERROR = "Generic Authorization Error"
# The details of the N005 of a login ended because its instance closed (its connection ended, or the daemon is
# stopping), not by the user (Protocol/README.md, Lifecycle 5).
INSTANCE_CLOSED = "the instance closed: its connection ended, or the daemon is stopping"

#: ``getMetadata`` op-codes: name → number (either may be sent).
METADATA_AUTHENTICATION = "METADATA_AUTHENTICATION"  # 0: authentication expiry (SDK date string; ``expires`` epoch ms)
METADATA_AUTHORIZATION = "METADATA_AUTHORIZATION"  # 1: authorization expiry of ``resource`` (as 0)
METADATA_DEVICE_ID = "METADATA_DEVICE_ID"  # 2: the device id (string)
METADATA_USER_META = "METADATA_USER_META"  # 3: the user attribute named ``userMetaKey``
METADATA_OPCODES = {
    METADATA_AUTHENTICATION: 0,
    METADATA_AUTHORIZATION: 1,
    METADATA_DEVICE_ID: 2,
    METADATA_USER_META: 3,
}

#: ``sendTrackingData.eventType`` values.
TRACKING_AUTHENTICATION = 0
TRACKING_AUTHORIZATION = 1
TRACKING_GET_SELECTED_PROVIDER = 2

#: The SDK's default redirect URL (``init``'s ``redirectUrl``); never load it, hand it to ``handleExternalURL``.
ADOBEPASS_REDIRECT_URL = "adobepass://ios.app"
