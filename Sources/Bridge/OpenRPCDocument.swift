// Generated from Protocol/openrpc.json by BridgeTests.DiscoveryTests (UPDATE_OPENRPC=1); do not edit by hand.
import JSON

/// The OpenRPC document `rpc.discover` returns (Protocol/openrpc.json), embedded so an installed binary
/// needs no data files.
public enum OpenRPC {
    /// The document text, as in Protocol/openrpc.json.
    public static let text = #"""
{
  "openrpc": "1.3.2",
  "info": {
    "title": "PassBridge",
    "version": "1.0.0",
    "description": "AccessEnabler over JSON-RPC 2.0. Requests from the host name AccessEnabler methods; the daemon answers each one when its operation ends, after the notifications (EntitlementDelegate callbacks) that belong to it. Entries marked `x-direction: daemon-to-host` are sent by the daemon: those with `x-notification: true` are notifications, the others are requests the host answers. See Protocol/README.md.",
    "license": {
      "name": "Apache-2.0",
      "url": "https://spdx.org/licenses/Apache-2.0.html"
    }
  },
  "methods": [
    {
      "name": "init",
      "summary": "Configure this connection's AccessEnabler instance.",
      "description": "Creates (or reconfigures) the engine instance of this connection. Every param is optional; a method called before init behaves as if `init {}` had been sent first. Without a software statement here or on the daemon's command line, setRequestor ends at once with setRequestorComplete(0) and status R400.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "softwareStatement",
          "required": false,
          "schema": {
            "type": "string",
            "description": "A software statement JWT (three dot-separated parts)."
          },
          "description": "The registered application's software statement; falls back to `--software-statement`."
        },
        {
          "name": "redirectUrl",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "The redirect URL the login and logout pages end on. Default `adobepass://ios.app` (or `--redirect-url`)."
        },
        {
          "name": "webView",
          "required": false,
          "schema": {
            "type": "boolean"
          },
          "description": "true (default): the host can open navigateToUrl pages. false: a second-screen host; logins report a REGCODE status instead."
        },
        {
          "name": "partnerSSO",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Declares a partner single sign-on provider the host answers for, e.g. `Apple`; only such a host receives partnerSSO/* requests."
        },
        {
          "name": "deviceIdentifier",
          "required": false,
          "schema": {
            "type": "string",
            "minLength": 1
          },
          "description": "Fleet mode: the stable identifier of the device this host acts for (server-to-server). The instance's logins, selection and every REST API V2 call (`AP-Device-Identifier`) are then that device's; without it, the store's own device identifier."
        },
        {
          "name": "deviceInfo",
          "required": false,
          "schema": {
            "type": "string",
            "description": "Base64 of a JSON object (`model`, `version`, `osName`, `osVersion`, `connectionType`, …)."
          },
          "description": "With deviceIdentifier: that device's `X-Device-Info`, sent on every REST API V2 call instead of the computed one."
        },
        {
          "name": "forwardedFor",
          "required": false,
          "schema": {
            "type": "string",
            "description": "An IPv4 or IPv6 address."
          },
          "description": "With deviceIdentifier: that device's address, sent as `X-Forwarded-For` on every REST API V2 call."
        }
      ],
      "result": {
        "name": "initResult",
        "schema": {
          "type": "object",
          "properties": {},
          "additionalProperties": false
        },
        "description": "An empty object."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        }
      ]
    },
    {
      "name": "setOptions",
      "summary": "Set global options sent with every backend call.",
      "description": "Applies options to this connection's engine. Flat params, all optional. Never queued behind setRequestor.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "applicationProfile",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Accepted for the SDK's sake and not sent: REST API V2 has no header or parameter for an application profile."
        },
        {
          "name": "visitorID",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Experience Cloud visitor id."
        },
        {
          "name": "device_info",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Base64 JSON device description replacing the one the daemon computes."
        },
        {
          "name": "handleSVC",
          "required": false,
          "schema": {
            "type": "boolean"
          },
          "description": "The host opens login pages in a system browser view itself."
        }
      ],
      "result": {
        "name": "setOptionsResult",
        "schema": {
          "type": "object",
          "properties": {},
          "additionalProperties": false
        },
        "description": "An empty object."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        }
      ]
    },
    {
      "name": "setRequestor",
      "summary": "Select the programmer (requestor) and load its configuration.",
      "description": "Fetches the requestor's configuration (MVPD list) from each service provider concurrently; for each MVPD the first service provider to answer wins. Calls that need a requestor and arrive while this runs are queued and run in order once it completes; after a failure they end with their failure outcome. Answered after the setRequestorComplete notification.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "requestorID",
          "required": true,
          "schema": {
            "type": "string"
          },
          "description": "The requestor id, e.g. `REF`."
        },
        {
          "name": "serviceProviders",
          "required": false,
          "schema": {
            "type": "array",
            "items": {
              "type": "string",
              "format": "uri"
            }
          },
          "description": "Backend base URLs to query instead of the daemon's backend: https, or http on a loopback host (localhost, ::1, 127.0.0.0/8), the same rule as --backend; any other entry is refused with -32602."
        },
        {
          "name": "signedRequestorID",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Accepted for compatibility and ignored.",
          "deprecated": true
        },
        {
          "name": "secret",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Accepted for compatibility and ignored.",
          "deprecated": true
        },
        {
          "name": "publicKey",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "Accepted for compatibility and ignored.",
          "deprecated": true
        }
      ],
      "result": {
        "name": "setRequestorResult",
        "schema": {
          "type": "object",
          "required": [
            "status"
          ],
          "properties": {
            "status": {
              "$ref": "#/components/schemas/Status01"
            },
            "statuses": {
              "$ref": "#/components/schemas/Statuses"
            }
          }
        },
        "description": "The params of setRequestorComplete; on failure also `statuses` (R400 no software statement, CFG400 unknown requestor, CFG404 backend not reachable, …)."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        }
      ]
    },
    {
      "name": "checkAuthentication",
      "summary": "Report whether the user is logged in, from local state only.",
      "description": "Looks up a valid profile in the local store without calling the backend. Ends with setAuthenticationStatus (and sendTrackingData, status N000 when not logged in).",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "authenticationStatus",
        "schema": {
          "$ref": "#/components/schemas/AuthenticationStatus"
        }
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "getAuthentication",
      "summary": "Start the login flow unless already logged in.",
      "description": "When no valid profile exists (or forceAuthn is true), sends displayProviderDialog and waits for setSelectedProvider; the login then goes through navigateToUrl and handleExternalURL (or a REGCODE status on a second-screen host). Answered when the flow ends, after its setAuthenticationStatus notification.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "forceAuthn",
          "required": false,
          "schema": {
            "type": "boolean"
          },
          "description": "Run the flow even when a valid profile exists. Default false."
        },
        {
          "name": "data",
          "required": false,
          "schema": {
            "type": "object"
          },
          "description": "Sent to the backend as the promotional TempPass identity: the header AP-TempPass-Identity carries base64 of this object as JSON on the login's sessions and profile calls and on later decisions (REST API V2 has no other place for it). An empty object sends nothing."
        },
        {
          "name": "filter",
          "required": false,
          "schema": {
            "oneOf": [
              {"type": "array", "items": {"type": "string"}},
              {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                  "TV_PROVIDERS": {"type": "array", "items": {"type": "string"}},
                  "FEATURED_TV_PROVIDERS": {"type": "array", "items": {"type": "string"}}
                }
              }
            ]
          },
          "description": "The MVPDs the platform's picker (partner SSO) offers, as the SDK applies it: an array of MVPD ids (TV_PROVIDERS), or the SDK v2.4+ object {TV_PROVIDERS, FEATURED_TV_PROVIDERS}. Ids without partner SSO are ignored; the order is kept. displayProviderDialog always lists every MVPD."
        }
      ],
      "result": {
        "name": "authenticationStatus",
        "schema": {
          "$ref": "#/components/schemas/AuthenticationStatus"
        },
        "description": "The params of the setAuthenticationStatus that ended the flow."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "setSelectedProvider",
      "summary": "Answer the provider dialog with the user's choice.",
      "description": "Selects the MVPD for the login flow in progress. A regular MVPD starts the login (navigateToUrl or a REGCODE status) and the call is answered `{}` at that point. A TempPass MVPD, null (cancel) or an id not in the configuration end the flow, and the call is answered with that flow's status. Never queued. An id the provider dialog did not offer also gets status PB404, naming the closest offered id.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "mvpdId",
          "required": true,
          "schema": {
            "type": [
              "string",
              "null"
            ]
          },
          "description": "The MVPD id from displayProviderDialog, or null to cancel."
        }
      ],
      "result": {
        "name": "setSelectedProviderResult",
        "schema": {
          "oneOf": [
            {
              "type": "object",
              "properties": {},
              "additionalProperties": false
            },
            {
              "$ref": "#/components/schemas/AuthenticationStatus"
            }
          ]
        },
        "description": "`{}` when a login page or code was issued, else the ending setAuthenticationStatus params."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "handleExternalURL",
      "summary": "Complete a login or logout after the page reached the redirect URL.",
      "description": "Hands back the redirect URL the login or logout page ended on. The URL's scheme, host and path must equal the registered redirect URL (query and fragment are ignored), else -32602. Completes the pending flow once; a second call for the same flow gets the same answer with no new notification.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "url",
          "required": true,
          "schema": {
            "type": "string",
            "format": "uri"
          },
          "description": "The URL the page redirected to."
        }
      ],
      "result": {
        "name": "authenticationStatus",
        "schema": {
          "$ref": "#/components/schemas/AuthenticationStatus"
        },
        "description": "The status of the flow it completed."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "getAuthenticationToken",
      "summary": "Deprecated: complete the pending login.",
      "description": "The SDK's older name for completing a login; behaves as handleExternalURL with the registered redirect URL.",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "authenticationStatus",
        "schema": {
          "$ref": "#/components/schemas/AuthenticationStatus"
        }
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ],
      "deprecated": true
    },
    {
      "name": "checkPreauthorizedResources",
      "summary": "Ask which resources the user may watch (for UI decoration).",
      "description": "Answered after the preauthorizedResources notification with the ids that were found authorized, in the caller's spelling.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "resources",
          "required": true,
          "schema": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "description": "Resource ids to check."
        },
        {
          "name": "cache",
          "required": false,
          "schema": {
            "type": "boolean"
          },
          "description": "Answer from the permits this instance holds in memory when every resource asked is among them (denials are never cached, and no decision is ever stored). Default true."
        }
      ],
      "result": {
        "name": "preauthorizedResources",
        "schema": {
          "type": "object",
          "required": [
            "resources"
          ],
          "properties": {
            "resources": {
              "type": "array",
              "items": {
                "type": "string"
              }
            }
          }
        }
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "checkAuthorization",
      "summary": "Ask for a media token for a resource without starting a login.",
      "description": "When logged in, requests an authorization decision and a short media token; ends with setToken or tokenRequestFailed. When not logged in, ends with tokenRequestFailed(User Not Authenticated Error).",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "resource",
          "required": true,
          "schema": {
            "type": "string"
          },
          "description": "A plain resource id or an MRSS document; passed through byte for byte."
        },
        {
          "name": "data",
          "required": false,
          "schema": {
            "type": "object"
          },
          "description": "Sent as the promotional TempPass identity (header AP-TempPass-Identity, base64 of this object as JSON) on the decision call; without it, the identity of the last getAuthentication or getAuthorization data is sent."
        }
      ],
      "result": {
        "name": "authorizationOutcome",
        "schema": {
          "oneOf": [
            {
              "$ref": "#/components/schemas/TokenResult"
            },
            {
              "$ref": "#/components/schemas/TokenFailure"
            }
          ]
        },
        "description": "The params of setToken or of tokenRequestFailed."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "getAuthorization",
      "summary": "Ask for a media token, logging in first when needed.",
      "description": "Like checkAuthorization, but when no valid profile exists it first runs the login flow (displayProviderDialog…setAuthenticationStatus) and then continues with the same resource and data. If that login fails, ends with tokenRequestFailed whose errorDescription is empty; if the user cancels it at the provider dialog (setSelectedProvider null), the login's setAuthenticationStatus(0, \"Provider not Selected Error\") ends the call as in the SDK (no tokenRequestFailed, no authorization tracking) and the result repeats its params.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "resource",
          "required": true,
          "schema": {
            "type": "string"
          },
          "description": "A plain resource id or an MRSS document; passed through byte for byte."
        },
        {
          "name": "data",
          "required": false,
          "schema": {
            "type": "object"
          },
          "description": "Sent as the promotional TempPass identity (header AP-TempPass-Identity, base64 of this object as JSON) on the decision call; without it, the identity of the last getAuthentication or getAuthorization data is sent."
        }
      ],
      "result": {
        "name": "authorizationOutcome",
        "schema": {
          "oneOf": [
            {
              "$ref": "#/components/schemas/TokenResult"
            },
            {
              "$ref": "#/components/schemas/TokenFailure"
            },
            {
              "$ref": "#/components/schemas/AuthenticationStatus"
            }
          ]
        },
        "description": "The params of setToken or of tokenRequestFailed, or of setAuthenticationStatus when the user cancelled the login it started."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "logout",
      "summary": "Log the user out on this device.",
      "description": "Deletes the device's profiles at the backend and locally, then (on a web-view host) sends navigateToUrl with the MVPD's logout page. Ends with setAuthenticationStatus(0, User Not Authenticated Error) after handleExternalURL of that page, or after at most 10 s without it.",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "authenticationStatus",
        "schema": {
          "$ref": "#/components/schemas/AuthenticationStatus"
        }
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "getSelectedProvider",
      "summary": "Report the MVPD of the current login.",
      "description": "Answered after the selectedProvider notification. Never queued.",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "selectedProvider",
        "schema": {
          "type": "object",
          "required": [
            "mvpd"
          ],
          "properties": {
            "mvpd": {
              "oneOf": [
                {
                  "$ref": "#/components/schemas/MVPD"
                },
                {
                  "type": "null"
                }
              ]
            }
          }
        }
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        }
      ]
    },
    {
      "name": "getMetadata",
      "summary": "Read token expiry, device id or a user metadata attribute.",
      "description": "Answered after the setMetadataStatus notification. Expiries are epoch milliseconds; user attributes may be encrypted (then `encrypted` is true).",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "opCode",
          "required": true,
          "schema": {
            "oneOf": [
              {
                "type": "string",
                "enum": [
                  "METADATA_AUTHENTICATION",
                  "METADATA_AUTHORIZATION",
                  "METADATA_DEVICE_ID",
                  "METADATA_USER_META"
                ]
              },
              {
                "type": "integer",
                "enum": [
                  0,
                  1,
                  2,
                  3
                ]
              }
            ]
          },
          "description": "What to read, by name or number: 0 authentication expiry, 1 authorization expiry, 2 device id, 3 user metadata."
        },
        {
          "name": "resource",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "The resource, for METADATA_AUTHORIZATION."
        },
        {
          "name": "userMetaKey",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "The attribute name, for METADATA_USER_META (e.g. `zip`, `userID`, `tokenSource`)."
        }
      ],
      "result": {
        "name": "metadataStatus",
        "schema": {
          "$ref": "#/components/schemas/MetadataStatus"
        },
        "description": "The params of setMetadataStatus."
      },
      "errors": [
        {
          "$ref": "#/components/errors/InvalidParams"
        },
        {
          "$ref": "#/components/errors/InternalError"
        },
        {
          "$ref": "#/components/errors/ShuttingDown"
        },
        {
          "$ref": "#/components/errors/Overloaded"
        },
        {
          "$ref": "#/components/errors/MessageTooLarge"
        },
        {
          "$ref": "#/components/errors/RequestorNotSet"
        }
      ]
    },
    {
      "name": "rpc.discover",
      "summary": "Return this OpenRPC document.",
      "description": "Returns the protocol description the daemon serves. Never queued.",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "openrpcDocument",
        "schema": {
          "type": "object",
          "description": "An OpenRPC 1.x document."
        }
      }
    },
    {
      "name": "rpc.stats",
      "summary": "Report the daemon's live instances, connections and calls in flight.",
      "description": "A diagnostic for operators and tests. instances: AccessEnabler instances alive in the daemon (an instance is freed once its connection closed and its calls ended); connections: connections with an instance, the caller's included; callsInFlight: calls accepted and not answered yet, those waiting for setRequestor included. Never queued; needs no setRequestor.",
      "paramStructure": "by-name",
      "params": [],
      "result": {
        "name": "stats",
        "schema": {
          "type": "object",
          "required": ["instances", "connections", "callsInFlight"],
          "additionalProperties": false,
          "properties": {
            "instances": {"type": "integer", "minimum": 0},
            "connections": {"type": "integer", "minimum": 0},
            "callsInFlight": {"type": "integer", "minimum": 0}
          }
        }
      }
    },
    {
      "name": "setRequestorComplete",
      "summary": "The requestor configuration finished loading.",
      "description": "Sent once per setRequestor: 1 when at least one service provider answered with a configuration, else 0.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "status",
          "required": true,
          "schema": {
            "$ref": "#/components/schemas/Status01"
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "setAuthenticationStatus",
      "summary": "An authentication check or flow ended.",
      "description": "1 with an empty errorCode when logged in; 0 with an error string otherwise (also at the end of logout).",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "status",
          "required": true,
          "schema": {
            "$ref": "#/components/schemas/Status01"
          }
        },
        {
          "name": "errorCode",
          "required": true,
          "schema": {
            "type": "string",
            "description": "\"\" on success, else one of the SDK's error strings."
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "displayProviderDialog",
      "summary": "The host should let the user pick an MVPD.",
      "description": "Lists every MVPD of the configuration in the backend's order (TempPass ones included); getAuthentication's filter does not narrow it. Answer with setSelectedProvider.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "mvpds",
          "required": true,
          "schema": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/MVPD"
            }
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "navigateToUrl",
      "summary": "The host should open this page.",
      "description": "A login or logout page. The host follows it until the page redirects to the redirect URL, then calls handleExternalURL with that URL.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "url",
          "required": true,
          "schema": {
            "type": "string",
            "format": "uri"
          }
        },
        {
          "name": "useSVC",
          "required": false,
          "schema": {
            "type": "boolean"
          },
          "description": "Present only when handleSVC is set: open in a system browser view."
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "setToken",
      "summary": "A media token was issued.",
      "description": "The short media token for the resource (as sent by the host, byte for byte).",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "token",
          "required": true,
          "schema": {
            "type": "string"
          },
          "description": "The serialized short media token."
        },
        {
          "name": "resource",
          "required": true,
          "schema": {
            "type": "string"
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "tokenRequestFailed",
      "summary": "An authorization request failed.",
      "description": "errorDescription carries the decision's details (e.g. the MVPD's message) or \"\".",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "resource",
          "required": true,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "errorCode",
          "required": true,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "errorDescription",
          "required": true,
          "schema": {
            "type": "string"
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "preauthorizedResources",
      "summary": "The result of checkPreauthorizedResources.",
      "description": "The requested ids found authorized.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "resources",
          "required": true,
          "schema": {
            "type": "array",
            "items": {
              "type": "string"
            }
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "selectedProvider",
      "summary": "The MVPD of the current login.",
      "description": "The result of getSelectedProvider; null when there is none.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "mvpd",
          "required": true,
          "schema": {
            "oneOf": [
              {
                "$ref": "#/components/schemas/MVPD"
              },
              {
                "type": "null"
              }
            ]
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "setMetadataStatus",
      "summary": "The result of getMetadata.",
      "description": "key is the opCode number; arguments echoes the getMetadata params as sent.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "metadata",
          "required": true,
          "schema": {},
          "description": "Epoch ms (0, 1), the device id (2), the attribute value (3), or null."
        },
        {
          "name": "encrypted",
          "required": true,
          "schema": {
            "type": "boolean"
          }
        },
        {
          "name": "key",
          "required": true,
          "schema": {
            "type": "integer"
          }
        },
        {
          "name": "arguments",
          "required": true,
          "schema": {
            "type": "object"
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "sendTrackingData",
      "summary": "An analytics event.",
      "description": "eventType 0 authentication, 1 authorization, 2 MVPD selection; data is the SDK's array of strings for that event.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "data",
          "required": true,
          "schema": {
            "type": "array",
            "items": {
              "type": [
                "string",
                "null"
              ]
            }
          }
        },
        {
          "name": "eventType",
          "required": true,
          "schema": {
            "type": "integer",
            "enum": [
              0,
              1,
              2
            ]
          }
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "presentTvProviderDialog",
      "summary": "The platform provider picker would be shown now.",
      "description": "Partner SSO only.",
      "paramStructure": "by-name",
      "params": [],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "dismissTvProviderDialog",
      "summary": "The platform provider picker was closed.",
      "description": "Partner SSO only.",
      "paramStructure": "by-name",
      "params": [],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "status",
      "summary": "Advanced status (informational, warning or error).",
      "description": "Ids such as N000, N005, N011, N111, Z100, P100, R400, CFG100, VSA203. The second-screen id REGCODE carries code, url and notAfter. Warning and error statuses are repeated in the `statuses` of a failed outcome's result; PB404 is the daemon's own (an MVPD id the provider dialog did not offer).",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "id",
          "required": true,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "level",
          "required": true,
          "schema": {
            "type": "string",
            "enum": [
              "info",
              "warning",
              "error"
            ]
          }
        },
        {
          "name": "message",
          "required": false,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "details",
          "required": false,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "resource",
          "required": false,
          "schema": {
            "type": "string"
          }
        },
        {
          "name": "code",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "REGCODE only: the registration code to show."
        },
        {
          "name": "url",
          "required": false,
          "schema": {
            "type": "string",
            "format": "uri"
          },
          "description": "REGCODE only: the activation page."
        },
        {
          "name": "notAfter",
          "required": false,
          "schema": {
            "type": "integer",
            "description": "Epoch milliseconds."
          },
          "description": "REGCODE only: when the code expires."
        }
      ],
      "x-direction": "daemon-to-host",
      "x-notification": true
    },
    {
      "name": "partnerSSO/checkAccessStatus",
      "summary": "Ask the host whether the app may use the platform's TV provider account.",
      "description": "Sent only to a host that declared partnerSSO in init: at setRequestor and checkAuthentication with prompt false (denied/restricted → status VSA403, notDetermined → VSA404), at getAuthentication with prompt true (then the same codes and the regular picker). An error counts as APPL_ERROR (VSA403 for accessNotGranted); no answer within 10 s as serviceTemporarilyUnavailable.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "prompt",
          "required": true,
          "schema": {
            "type": "boolean"
          },
          "description": "Whether the host may ask the user now."
        }
      ],
      "result": {
        "name": "accessStatusResult",
        "schema": {
          "type": "object",
          "required": [
            "accessStatus"
          ],
          "properties": {
            "accessStatus": {
              "type": "string",
              "enum": [
                "granted",
                "denied",
                "restricted",
                "notDetermined"
              ]
            }
          }
        }
      },
      "x-direction": "daemon-to-host",
      "errors": [
        {
          "$ref": "#/components/errors/PartnerFailure"
        }
      ]
    },
    {
      "name": "partnerSSO/requestAccountMetadata",
      "summary": "Ask the host for the platform account's provider and SAML answer.",
      "description": "Sent only to a host that declared partnerSSO in init, like Apple's VSAccountMetadataRequest. Without verificationToken it asks which provider the user is signed in with (interruptionAllowed true only inside getAuthentication: the host may show its provider picker, between the presentTvProviderDialog and dismissTvProviderDialog notifications). With verificationToken (REST V2's partner session) it asks for the SAML attribute-query response, which the daemon exchanges for a profile. Errors inside getAuthentication: userCancelled → N005, unsupportedProvider with an unsupportedProviderIdentifier the requestor knows → that provider's regular login page with no code, with one it does not know → N004, without one (\"Other TV provider\") → N003, serviceTemporarilyUnavailable / providerRejected / invalidVerificationToken → VSA503, anything else → APPL_ERROR; each then shows the regular picker. No answer within 10 s counts as serviceTemporarilyUnavailable.",
      "paramStructure": "by-name",
      "params": [
        {
          "name": "interruptionAllowed",
          "required": true,
          "schema": {
            "type": "boolean"
          },
          "description": "Whether the host may show UI."
        },
        {
          "name": "verificationToken",
          "required": false,
          "schema": {
            "type": "string"
          },
          "description": "From the backend's partner session."
        },
        {
          "name": "attributeNames",
          "required": false,
          "schema": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "description": "SAML attributes to request."
        },
        {
          "name": "supportedProviderIds",
          "required": false,
          "schema": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "description": "platformMappingIds the requestor supports."
        },
        {
          "name": "featuredProviderIds",
          "required": false,
          "schema": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "description": "platformMappingIds to feature."
        }
      ],
      "result": {
        "name": "accountMetadata",
        "schema": {
          "type": "object",
          "required": [
            "providerId",
            "authenticationExpirationDate"
          ],
          "properties": {
            "providerId": {
              "type": [
                "string",
                "null"
              ],
              "description": "The platform's provider id (an MVPD's platformMappingId); null when nobody is signed in at the platform."
            },
            "authenticationExpirationDate": {
              "type": [
                "integer",
                "null"
              ],
              "description": "When the platform's sign-in with that provider ends, epoch milliseconds; null with a null providerId."
            },
            "samlAttributeQueryResponse": {
              "type": "string",
              "description": "The SAML attribute-query response (XML text) answering verificationToken; required when verificationToken was sent."
            }
          }
        }
      },
      "x-direction": "daemon-to-host",
      "errors": [
        {
          "$ref": "#/components/errors/PartnerFailure"
        }
      ]
    }
  ],
  "components": {
    "schemas": {
      "Status01": {
        "type": "integer",
        "enum": [
          0,
          1
        ],
        "description": "1 success, 0 error."
      },
      "AuthenticationStatus": {
        "type": "object",
        "required": [
          "status",
          "errorCode"
        ],
        "properties": {
          "status": {
            "$ref": "#/components/schemas/Status01"
          },
          "errorCode": {
            "type": "string"
          },
          "statuses": {
            "$ref": "#/components/schemas/Statuses"
          }
        }
      },
      "TokenResult": {
        "type": "object",
        "required": [
          "token",
          "resource"
        ],
        "properties": {
          "token": {
            "type": "string"
          },
          "resource": {
            "type": "string"
          }
        }
      },
      "TokenFailure": {
        "type": "object",
        "required": [
          "resource",
          "errorCode",
          "errorDescription"
        ],
        "properties": {
          "resource": {
            "type": "string"
          },
          "errorCode": {
            "type": "string"
          },
          "errorDescription": {
            "type": "string"
          },
          "statuses": {
            "$ref": "#/components/schemas/Statuses"
          }
        }
      },
      "MetadataStatus": {
        "type": "object",
        "required": [
          "metadata",
          "encrypted",
          "key",
          "arguments"
        ],
        "properties": {
          "metadata": {},
          "encrypted": {
            "type": "boolean"
          },
          "key": {
            "type": "integer"
          },
          "arguments": {
            "type": "object"
          }
        }
      },
      "MVPD": {
        "type": "object",
        "description": "An MVPD of the requestor's configuration, with the SDK's property names.",
        "required": [
          "ID",
          "displayName",
          "logoURL",
          "enablePlatformServices",
          "boardingStatus",
          "displayInPlatformPicker",
          "platformMappingId",
          "isTempPass"
        ],
        "properties": {
          "ID": {
            "type": "string"
          },
          "displayName": {
            "type": "string"
          },
          "logoURL": {
            "type": [
              "string",
              "null"
            ]
          },
          "enablePlatformServices": {
            "type": "boolean"
          },
          "boardingStatus": {
            "type": [
              "string",
              "null"
            ],
            "enum": [
              "PICKER",
              "SUPPORTED",
              null
            ]
          },
          "displayInPlatformPicker": {
            "type": "boolean"
          },
          "platformMappingId": {
            "type": [
              "string",
              "null"
            ]
          },
          "isTempPass": {
            "type": "boolean"
          }
        }
      },
      "Status": {
        "type": "object",
        "description": "The params of one `status` notification.",
        "required": [
          "id",
          "level"
        ],
        "properties": {
          "id": {
            "type": "string",
            "description": "The SDK's advanced status id (R400, CFG400, Z100, …), or PB404 from the daemon."
          },
          "level": {
            "type": "string",
            "enum": [
              "info",
              "warning",
              "error"
            ]
          },
          "message": {
            "type": "string"
          },
          "details": {
            "type": "string"
          },
          "resource": {
            "type": "string"
          },
          "code": {
            "type": "string"
          },
          "url": {
            "type": "string"
          },
          "notAfter": {
            "type": "integer"
          }
        }
      },
      "Statuses": {
        "type": "array",
        "items": {
          "$ref": "#/components/schemas/Status"
        },
        "description": "Why the operation failed: the warning and error `status` notifications of this outcome, in the order sent; when it sent none, those of the instance's failed setRequestor. Present only on a failed outcome (`status` 0, or a token failure) that has a reason."
      }
    },
    "errors": {
      "ParseError": {
        "code": -32700,
        "message": "Parse error",
        "data": {
          "reason": "unexpected token",
          "offset": 12
        },
        "x-description": "The message is not valid JSON (data gives the parser's reason and byte offset), or a Content-Length header block cannot be read (data gives the reason; the daemon skips to the next Content-Length header)."
      },
      "InvalidRequest": {
        "code": -32600,
        "message": "Invalid Request",
        "data": {
          "reason": "missing method"
        },
        "x-description": "The message is not a valid JSON-RPC 2.0 request."
      },
      "MethodNotFound": {
        "code": -32601,
        "message": "Method not found",
        "data": {
          "method": "noSuchMethod"
        },
        "x-description": "No such host-to-daemon method."
      },
      "InvalidParams": {
        "code": -32602,
        "message": "Invalid params",
        "data": {
          "param": "requestorID",
          "reason": "is required (a string)"
        },
        "x-description": "A required param is missing, a param has the wrong type, or the method does not take a param of that name (the message names the param and the reason; `data.closest` the nearest name the method takes; setOptions and the `data` objects are open); the params are not an object; or handleExternalURL got a URL that is not the redirect URL."
      },
      "InternalError": {
        "code": -32603,
        "message": "Internal error",
        "data": {
          "reason": "…"
        },
        "x-description": "The daemon failed unexpectedly."
      },
      "RequestorNotSet": {
        "code": -32002,
        "message": "Requestor not set",
        "data": {
          "reason": "call setRequestor first"
        },
        "x-description": "The method needs a requestor and this connection never sent setRequestor."
      },
      "ShuttingDown": {
        "code": -32003,
        "message": "Shutting down",
        "data": {
          "reason": "the daemon is shutting down"
        },
        "x-description": "The daemon is draining (end of input or SIGTERM) and did not finish this request within --shutdown-timeout."
      },
      "Overloaded": {
        "code": -32004,
        "message": "Overloaded",
        "data": {
          "reason": "too many requests in flight",
          "limit": 1024
        },
        "x-description": "Too many requests in flight on this connection, or (reason \"the batch's answers exceed the output limit\", limit 1048576) a batch whose answers would pass the output limit."
      },
      "AccessDenied": {
        "code": -32005,
        "message": "Access denied",
        "data": {
          "reason": "this daemon serves only uid 998, root, members of group 998"
        },
        "x-description": "Sent once with id null to a socket peer that is not root, the daemon's user, an --allow-uid or in the --socket-group; the connection is then closed."
      },
      "MessageTooLarge": {
        "code": -32004,
        "message": "Message too large",
        "data": {
          "reason": "message too large",
          "limit": 16777216
        },
        "x-description": "The message exceeds --max-message-bytes."
      },
      "PartnerFailure": {
        "code": -32000,
        "message": "Partner request failed",
        "data": {
          "reason": "userCancelled"
        },
        "x-description": "Sent by the host, not the daemon: any code; data.reason is one of accessNotGranted, unsupportedProvider (with unsupportedProviderIdentifier), userCancelled, serviceTemporarilyUnavailable, providerRejected, invalidVerificationToken, other. A missing or unknown reason counts as other."
      }
    }
  }
}
"""#

    /// The parsed document.
    public static let document: JSON = {
        do { return try JSON.parse(text) } catch { fatalError("Protocol/openrpc.json does not parse: \(error)") }
    }()
}
