// Types of passbridge.mjs: the methods, results and notifications of Protocol/openrpc.json.
// Self-contained (no @types/node): the process and stream types are reduced to what a caller uses.

/** Seconds a call that does not wait on the user may take by default. */
export declare const DEFAULT_TIMEOUT: number;
/** Methods that may wait on the user: no default timeout. */
export declare const WAITS_ON_USER: readonly ['getAuthentication', 'getAuthorization', 'logout'];

/** A `status` notification: SDK ids (N000, Z100, R400, CFG400, REGCODE…) or the daemon's own (PB404). */
export interface Status {
  id: string;
  /** The same as `id`: the iOS SDK's name for it. */
  errorId: string;
  level: 'info' | 'warning' | 'error';
  message?: string;
  details?: string;
  resource?: string;
  /** REGCODE: the registration code to show. */
  code?: string;
  /** REGCODE: the activation page. */
  url?: string;
  /** REGCODE: the page that takes the code directly, when the daemon sends one. */
  authenticateUrl?: string;
  /** REGCODE: the activation page, when the daemon sends it apart from `url`. */
  activationUrl?: string;
  /** REG100: seconds until the code expires. */
  secondsLeft?: number;
  /** REGCODE: when the code expires, epoch milliseconds. */
  notAfter?: number;
}

/** Present on a failed outcome that has a reason (Protocol/README.md "Failure reasons"). */
export interface Reasons {
  statuses?: Status[];
}

export interface MVPD {
  ID: string;
  displayName: string;
  logoURL: string | null;
  enablePlatformServices: boolean;
  boardingStatus: 'PICKER' | 'SUPPORTED' | null;
  displayInPlatformPicker: boolean;
  platformMappingId: string | null;
  isTempPass: boolean;
  requiresSVC: boolean;
}

/** status 1 authenticated (errorCode ""), 0 not (errorCode says which). */
export interface AuthenticationStatus extends Reasons {
  status: 0 | 1;
  errorCode: string;
}

export interface TokenResult {
  token: string;
  resource: string;
  /** checkAuthorization/getAuthorization's result only: the advisory status (Z011 TempPass, Z010 degradation). */
  statuses?: Status[];
}

export interface TokenFailure extends Reasons {
  resource: string;
  errorCode: string;
  errorDescription: string;
}

export type AuthorizationResult = TokenResult | TokenFailure;

export interface MetadataResult {
  /** The expiry as the SDK's date string, "yyyy/MM/dd HH:mm:ss GMT +0000" (op codes 0, 1), the device id (2), the
   * user attribute (3), or null. */
  metadata: unknown;
  /** Op codes 0 and 1 with an expiry: the same instant in epoch ms. */
  expires?: number;
  encrypted: boolean;
  key: number;
  arguments: Record<string, unknown>;
  /** Why `metadata` is null when something failed: the failed setRequestor's reasons, STORE500 (the result's only). */
  statuses?: Status[];
}

/** REST API V2's error object of a refused preauthorize decision, or the daemon's (status 0). */
export interface PreauthorizeError {
  status: number;
  code: string;
  message?: string;
  details?: string;
  action: string;
}

export type OpCode = 'METADATA_AUTHENTICATION' | 'METADATA_AUTHORIZATION' | 'METADATA_DEVICE_ID' | 'METADATA_USER_META' | 0 | 1 | 2 | 3;

/** Host→daemon methods: their params and results. */
export interface Methods {
  init: {
    params: {
      softwareStatement?: string;
      redirectUrl?: string;
      webView?: boolean;
      partnerSSO?: string;
      /** The device a server acts for: its stable id (at most 256 characters), its X-Device-Info (base64 JSON) and its address. */
      deviceIdentifier?: string;
      deviceInfo?: string;
      forwardedFor?: string;
      /** Single sign-on tokens (platform and service token). */
      subjectToken?: string;
      serviceToken?: string;
      /** The MVPDs whose pages open in the Safari View Controller (with setOptions handleSVC), and their redirect URL. */
      svcMVPDs?: string[];
      svcRedirectUrl?: string;
      /** The SDK's initWithStorageCheck. */
      storageCheck?: 'none' | 'all' | 'clear';
    };
    result: {};
  };
  setOptions: { params: { applicationProfile?: string; visitorID?: string; device_info?: string; handleSVC?: boolean }; result: {} };
  /** serviceProviders: at most 16 backend URLs. */
  setRequestor: {
    params: { requestorID: string; serviceProviders?: string[]; signedRequestorID?: string; secret?: string; publicKey?: string };
    result: { status: 0 | 1 } & Reasons;
  };
  checkAuthentication: { params: {}; result: AuthenticationStatus };
  getAuthentication: {
    params: { forceAuthn?: boolean; data?: Record<string, unknown>; filter?: string[] | { TV_PROVIDERS?: string[]; FEATURED_TV_PROVIDERS?: string[] } };
    result: AuthenticationStatus;
  };
  setSelectedProvider: { params: { mvpdId: string | null }; result: {} | AuthenticationStatus };
  handleExternalURL: { params: { url: string }; result: AuthenticationStatus };
  getAuthenticationToken: { params: {}; result: AuthenticationStatus };
  /** `statuses`: why the list may be short (P100, Z010, STORE500; the failed setRequestor's reasons). */
  checkPreauthorizedResources: {
    params: { resources: string[]; cache?: boolean };
    result: { resources: string[]; statuses?: Status[] };
  };
  /** The iOS SDK's preauthorize: a decision per resource, each with REST API V2's error object when refused. */
  preauthorize: {
    params: { resources: string[]; disableFeatures?: ('LOCAL_CACHE' | 'REMOTE_CACHE')[] };
    result: { status?: PreauthorizeError; decisions: { id: string; authorized: boolean; error?: PreauthorizeError }[] };
  };
  checkAuthorization: { params: { resource: string; data?: Record<string, unknown> }; result: AuthorizationResult };
  /** A login that failed or was cancelled ends with a TokenFailure carrying that login's errorCode. */
  getAuthorization: { params: { resource: string; data?: Record<string, unknown> }; result: AuthorizationResult };
  logout: { params: {}; result: AuthenticationStatus };
  getSelectedProvider: { params: {}; result: { mvpd: MVPD | null } };
  getMetadata: { params: { opCode: OpCode; resource?: string; userMetaKey?: string }; result: MetadataResult };
  'rpc.discover': { params: {}; result: Record<string, unknown> };
  /** The daemon's counters (Protocol/README.md, "Diagnostics"). */
  'rpc.stats': { params: {}; result: Record<string, unknown> };
}

/** Daemon→host notifications (EntitlementDelegate callbacks) and their params. */
export interface Notifications {
  setRequestorComplete: { status: 0 | 1 };
  setAuthenticationStatus: AuthenticationStatus;
  displayProviderDialog: { mvpds: MVPD[] };
  navigateToUrl: { url: string; useSVC?: boolean };
  setToken: TokenResult;
  tokenRequestFailed: TokenFailure;
  preauthorizedResources: { resources: string[] };
  selectedProvider: { mvpd: MVPD | null };
  setMetadataStatus: MetadataResult;
  sendTrackingData: { data: (string | null)[]; eventType: 0 | 1 | 2 };
  presentTvProviderDialog: {};
  dismissTvProviderDialog: {};
  status: Status;
}

export interface CallOptions {
  /** Seconds; null waits for ever. Default: the client's timeout, or none for WAITS_ON_USER methods. */
  timeout?: number | null;
  /** When it aborts: `$/cancelRequest` for the call, then the call rejects with the signal's reason once the
   * daemon answered (-32800) or CANCEL_GRACE seconds passed. */
  signal?: AbortSignal;
}

export interface SpawnOptions {
  /** Where the daemon's logs go: 'pipe' (default: copied to ours, last lines kept for DaemonExited), 'inherit', 'ignore' or an fd. */
  stderr?: 'pipe' | 'inherit' | 'ignore' | number;
  env?: Record<string, string | undefined>;
  /** Default timeout in seconds of calls that do not wait on the user; null for none. */
  timeout?: number | null;
}

/** The spawned daemon, as far as a caller uses it. */
export interface DaemonProcess {
  readonly pid?: number;
  kill(signal?: string | number): boolean;
}

export declare class PassBridgeError extends Error {}
export declare class RPCError extends PassBridgeError {
  readonly code: number;
  /** The error object's message (Error.message is "code: message"). */
  readonly rpcMessage: string;
  /** For -32602: {param, reason, closest?}. */
  readonly data: unknown;
}
/** The connection is closed, or (a login helper's) the login ended because its instance closed: `statuses` then holds
 * its N005, whose details are INSTANCE_CLOSED. `method`: the call it ended, when it ended one. */
export declare class ConnectionClosed extends PassBridgeError {
  readonly method?: string;
  readonly statuses?: Status[];
}
export declare class DaemonExited extends ConnectionClosed {
  readonly exitCode: number | string;
  readonly stderr: string[];
}
/** The details of the N005 of a login ended because its connection ended or the daemon is stopping, not by the user. */
export declare const INSTANCE_CLOSED: string;
export declare class Timeout extends PassBridgeError {}
/** spawn() found no daemon: `looked` says where it looked; the message also says what to install. */
export declare class DaemonNotFound extends PassBridgeError {
  readonly looked: string;
}

/** The JSON-RPC error code of a request cancelled by `$/cancelRequest`. */
export declare const REQUEST_CANCELLED: -32800;
/** Seconds an aborted or timed-out call waits for the daemon's answer to its `$/cancelRequest`. */
export declare const CANCEL_GRACE: number;
/** Seconds close() waits for a spawned daemon to exit beyond its --shutdown-timeout, before SIGTERM (then SIGKILL). */
export declare const CLOSE_GRACE: number;

/** A failed outcome, thrown by the typed helpers only (never by `call`). */
export declare class EntitlementError extends PassBridgeError {
  /** Adobe's error code ("User not Authorized Error", "User Not Authenticated Error", …; "" for setRequestor). */
  readonly errorCode: string;
  /** The outcome's reasons (Protocol/README.md "Failure reasons"); empty when there is none. */
  readonly statuses: Status[];
  /** Each status as "ID message". */
  readonly reasons: string[];
  /** The resource of an authorization outcome. */
  resource: string | undefined;
}
/** setRequestor failed; `statuses` says why. */
export declare class RequestorFailed extends EntitlementError {}
/** No valid login; `errorCode` is Adobe's reason. */
export declare class NotAuthenticated extends EntitlementError {}
/** The login was cancelled ("Provider not Selected Error"). */
export declare class LoginCancelled extends NotAuthenticated {}
declare class AuthorizationError extends EntitlementError {
  resource: string;
  /** The outcome's errorDescription (the MVPD's message or ""). */
  readonly description: string;
}
/** The MVPD denied the resource (Z100). */
export declare class NotAuthorized extends AuthorizationError {
  /** What the MVPD said: the Z100 status's details, else the errorDescription. */
  readonly mvpdMessage: string;
}
/** Any other authorization failure (Generic / Internal Authorization Error…). */
export declare class AuthorizationFailed extends AuthorizationError {}

/** The login state, typed. */
export interface Authentication {
  authenticated: boolean;
  /** "" when authenticated, else Adobe's reason. */
  errorCode: string;
  statuses: Status[];
}
/** Authorization granted: the short media token (base64 text). */
export interface MediaToken {
  kind: 'token';
  resource: string;
  token: string;
  /** Advisory statuses (Z011 TempPass, Z010 degradation). */
  statuses: Status[];
}
/** Authorization refused or failed. */
export interface AuthorizationFailure {
  kind: 'failure';
  resource: string;
  errorCode: string;
  /** The errorDescription: the MVPD's message or "". */
  description: string;
  statuses: Status[];
}
export type Authorization = MediaToken | AuthorizationFailure;
export interface Preauthorization {
  /** The resources the user may watch (UI decoration only), in the order asked. */
  authorized: string[];
  /** The others asked about. */
  denied: string[];
  /** Why each refused resource was refused (absent for a plain "no" without an error object). */
  errors: Record<string, PreauthorizeError>;
  /** The error of a request that failed before any decision (every resource then carries it). */
  failure?: PreauthorizeError;
}
export interface Metadata {
  /** The op code's number: 0 authentication expiry, 1 authorization expiry (`value` in epoch ms, from `expires`), 2
   * device id, 3 user attribute. */
  key: number;
  value: unknown;
  encrypted: boolean;
  arguments: Record<string, unknown>;
  /** Why `value` is null when something failed (a failed setRequestor's reasons, STORE500); else empty. */
  statuses: Status[];
}
export interface Logout {
  statuses: Status[];
}

export declare function authorizationOutcome(resource: string, result: AuthorizationResult): Authorization;
export declare function authorizationError(failure: AuthorizationFailure): NotAuthorized | NotAuthenticated | AuthorizationFailed;
export declare function authenticationOutcome(result: AuthenticationStatus): Authentication;

export interface AuthorizeOptions extends CallOptions {
  /** true: getAuthorization (logs in first when needed; no timeout unless given); false (default): checkAuthorization. */
  login?: boolean;
  data?: Record<string, unknown>;
}

/** The second screen's code, as loginSecondScreen's showCode gets it. */
export interface RegistrationCode {
  code: string;
  /** The page to show for the other device: the REGCODE's url (the configured activation page with the code, else the direct authenticate URL). */
  url: string;
  /** The direct `…/api/v2/authenticate/{serviceProvider}/{code}`, which a phone opens as is. */
  authenticateUrl: string;
  /** The configured activation page; null when none is configured. */
  activationUrl: string | null;
  /** When the code expires, epoch ms. */
  notAfter: number | null;
  /** Seconds until then (from REG100 when sent). */
  secondsLeft: number | null;
  /** false for the first call, true for each countdown update (REG100). */
  update: boolean;
}

export interface LoginOptions {
  /** Answers the provider dialog: an MVPD ID, or a function of the offered MVPDs (null cancels); left out, your own listener answers. */
  mvpd?: string | ((mvpds: MVPD[]) => string | null | Promise<string | null>);
  /** Seconds; null (default) waits as long as the user takes. */
  timeout?: number | null;
  /** Aborting cancels the login in the daemon ($/cancelRequest). */
  signal?: AbortSignal;
  forceAuthn?: boolean;
}

type Listener<P> = (params: P) => void;

export declare class PassBridge {
  /** Starts `exe --stdio ...args` (null or undefined: $PASSBRIDGE, else `passbridge` in PATH); the child is
   * killed if this process exits first. No such executable rejects with DaemonNotFound. */
  static spawn(exe: string | null | undefined, args?: string[], options?: SpawnOptions): Promise<PassBridge>;
  /** Connects to a daemon's Unix socket; rejects with ConnectionClosed naming the path. */
  static connect(path: string, options?: { timeout?: number | null }): Promise<PassBridge>;

  /** The spawned daemon (undefined for a socket connection). */
  process?: DaemonProcess;
  /** Resolves with the spawned daemon's exit code (or signal name) once it has exited. */
  exited?: Promise<number | string>;
  /** Default timeout in seconds of calls that do not wait on the user. */
  timeout: number | null;
  readonly closed: boolean;

  call<M extends keyof Methods>(method: M, params?: Methods[M]['params'], options?: CallOptions): Promise<Methods[M]['result']>;
  call(method: string, params?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;

  /** setRequestor; rejects with RequestorFailed when it failed. */
  setRequestorOrThrow(requestorID: string, options?: CallOptions): Promise<void>;
  /** checkAuthentication, typed. */
  checkAuthentication(options?: CallOptions): Promise<Authentication>;
  /** checkAuthorization, typed (never rejects for a denial). */
  checkAuthorization(resource: string, options?: CallOptions): Promise<Authorization>;
  /** The media token for `resource`; rejects with NotAuthorized, NotAuthenticated / LoginCancelled, AuthorizationFailed. */
  authorize(resource: string, options?: AuthorizeOptions): Promise<string>;
  /** The wire's preauthorize; `cache: false` asks the backend even for permits this instance knows. */
  preauthorize(resources: string[], options?: CallOptions & { cache?: boolean }): Promise<Preauthorization>;
  /** getMetadata, typed; `key` is the user attribute for op code 3. */
  metadata(opCode: OpCode, options?: CallOptions & { resource?: string; key?: string }): Promise<Metadata>;
  /** Logs in on a web-view host: `openUrl` gets the login page, resolves to the redirect URL reached (or null). */
  loginWeb(openUrl: (url: string) => string | null | Promise<string | null>, options?: LoginOptions): Promise<Authentication>;
  /** Logs in on a second-screen host: `showCode` gets the code, then each countdown update. */
  loginSecondScreen(showCode: (code: RegistrationCode) => void | Promise<void>, options?: LoginOptions): Promise<Authentication>;
  /**
   * logout to its end; `openUrl` gets the MVPD's logout page on a web-view host and resolves to the redirect URL reached
   * (or null); rejects with an `EntitlementError` ("Generic Authentication Error") when the login was kept.
   */
  logOut(options?: CallOptions & { openUrl?: (url: string) => string | null | Promise<string | null> }): Promise<Logout>;

  /**
   * Answers daemon->host requests (partnerSSO/*) with what `fn` returns (null when it returns nothing); throw an object
   * with `reason` to refuse, its other fields going with it (`{reason: 'unsupportedProvider',
   * unsupportedProviderIdentifier: 'X'}`).
   */
  handle(method: string, fn: (params: Record<string, unknown>) => unknown): void;
  /** Closes our side; resolves with the spawned daemon's exit code (0 for a socket). */
  close(): Promise<number | string>;

  on<N extends keyof Notifications>(name: N, listener: Listener<Notifications[N]>): this;
  on(name: 'close', listener: () => void): this;
  once<N extends keyof Notifications>(name: N, listener: Listener<Notifications[N]>): this;
  once(name: 'close', listener: () => void): this;
  off(name: string, listener: (...args: any[]) => void): this;
}
