import JSON
import ThreadAffinity

/// One registered application at one backend: the backend URL (no trailing slash) and the SHA-256 (hex) of its
/// software statement. DCR credentials and access tokens are kept per scope.
public struct StoreScope: Sendable, Hashable {
    public var backend: String
    public var statementSHA256: String

    public init(backend: String, statementSHA256: String) {
        self.backend = backend
        self.statementSHA256 = statementSHA256
    }
}

/// Where a device's login for one requestor lives: scope, device identifier, requestor id.
public struct LoginKey: Sendable, Hashable {
    public var scope: StoreScope
    public var device: String
    public var requestor: String

    /// Device and requestor only: every key an authorization looks up (its login, profile and expiry) hashes this
    /// key, and the scope's two long strings (a URL and a SHA-256) are the same for nearly every key of a process,
    /// which has one or two scopes. Equal keys still hash alike; `==` compares the scope too.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(requestor)
    }
}

/// One profile's key: a login key and the MVPD id.
public struct ProfileKey: Sendable, Hashable {
    public var login: LoginKey
    public var mvpd: String
}

/// DCR client credentials (kept forever; the first writer wins).
struct ClientCredentials: Sendable, Equatable {
    var id: String
    var secret: String
}

/// A cached access token and its expiry in epoch ms; `clientID` is the client it was issued to.
struct AccessTokenRecord: Sendable, Equatable {
    var clientID: String
    var token: String
    var expires: Int64
}

/// A stored profile: its JSON text as the backend sent it, and its `notAfter` in epoch ms.
struct StoredProfile: Sendable, Equatable {
    var json: String
    var notAfter: Int64
}

/// What `passbridge state list` shows of one login: never a token or a secret.
public struct StoredLogin: Sendable, Equatable {
    public var backend: String
    public var device: String
    public var requestor: String
    public var mvpd: String
    /// The profile's `userID` attribute when it is plain text.
    public var userID: String?
    /// The profile's `notAfter` in epoch ms.
    public var notAfter: Int64
}

/// The stored logins an administration command acts on (`passbridge state --requestor ID --device ID`): those of
/// `requestor` and of `device`, each when given; every login when neither is.
public struct LoginSelection: Sendable, Equatable {
    public var requestor: String?
    public var device: String?

    public init(requestor: String? = nil, device: String? = nil) {
        self.requestor = requestor
        self.device = device
    }

    public func contains(_ login: StoredLogin) -> Bool { takes(requestor: login.requestor, device: login.device) }

    func contains(_ key: LoginKey) -> Bool { takes(requestor: key.requestor, device: key.device) }

    private func takes(requestor: String, device: String) -> Bool {
        (self.requestor == nil || self.requestor == requestor) && (self.device == nil || self.device == device)
    }

    /// What the selection's deletion changed, for the live logins: every login of one requestor; every login when
    /// no requestor or a device is given (the watchers read theirs again).
    var change: LoginChange {
        guard device == nil, let requestor else { return .everything }
        return .requestor(requestor)
    }

    /// The SQL condition (` WHERE …`, or nothing) and its arguments; `placeholder` numbers them (`?` or `$1`).
    func condition(_ placeholder: (Int) -> String) -> (String, [SQLValue]) {
        var clauses: [String] = []
        var arguments: [SQLValue] = []
        for (column, value) in [("requestor", requestor), ("device_id", device)] {
            guard let value else { continue }
            arguments.append(.text(value))
            clauses.append("\(column) = \(placeholder(arguments.count))")
        }
        return (clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND "), arguments)
    }
}

extension StoredLogin {
    /// What may be shown of the profile stored under `key`: the `userID` attribute only when it is plain text.
    init(_ key: ProfileKey, _ profile: StoredProfile) {
        let json = try? JSON.parse(profile.json)
        let userID = json?["attributes"]?["userID"]
        let plain = userID?["state"]?.stringValue != "enc" ? (userID?["value"]?.stringValue ?? userID?.stringValue) : nil
        self.init(
            backend: key.login.scope.backend, device: key.login.device, requestor: key.login.requestor, mvpd: key.mvpd, userID: plain,
            notAfter: profile.notAfter)
    }
}

/// The operations of one store database (SQLite or PostgreSQL). Calls run on the store's worker threads only.
/// Writes marked durable are on disk when they return; cache writes may be lost in a crash.
protocol StoreDatabase: AnyObject {
    /// The thread the database belongs to: its worker claims it (``StoreExecutor``).
    var thread: ThreadAffinity { get }
    /// The store's device identifier, created from `proposed` by the first writer.
    func deviceIdentity(proposed: String) throws -> String
    func clientCredentials(_ scope: StoreScope) throws -> ClientCredentials?
    /// Inserts unless credentials exist (durable); returns the stored ones.
    func insertClientCredentials(_ credentials: ClientCredentials, _ scope: StoreScope) throws -> ClientCredentials
    /// Deletes the credentials (and their token) only while they are still `clientID`'s (durable).
    func deleteClientCredentials(_ scope: StoreScope, clientID: String) throws
    func accessToken(_ scope: StoreScope) throws -> AccessTokenRecord?
    func saveAccessToken(_ record: AccessTokenRecord, _ scope: StoreScope) throws
    /// Takes the right to refresh the scope's token until `until` (epoch ms), unless another holder has it after
    /// `now` or the stored token is no longer `seen` (another process refreshed it meanwhile); true when taken.
    func claimTokenRefresh(_ scope: StoreScope, seen: String, now: Int64, until: Int64) throws -> Bool
    /// Gives back the lease ``claimTokenRefresh(_:seen:now:until:)`` took until `until` after a refresh that failed,
    /// unless it has been taken again since.
    func releaseTokenRefresh(_ scope: StoreScope, until: Int64) throws
    /// Every profile stored under `key`, by MVPD id (one query).
    func profiles(_ key: LoginKey) throws -> [String: StoredProfile]
    /// Durable.
    func saveProfile(_ profile: StoredProfile, _ key: ProfileKey) throws
    /// Deletes the profile and its authorization expiries (durable).
    func deleteProfile(_ key: ProfileKey) throws
    func selectedProvider(_ key: LoginKey) throws -> String?
    func authorizationExpiry(_ key: ProfileKey, resource: String) throws -> Int64?
    /// Cache writes (`TokenStore.submit`), in one transaction not synced to disk: authorization expiries, and
    /// selected MVPDs (nil: none). Returns the expiries left out: on PostgreSQL, those whose key does not fit in an
    /// index row (a long MRSS resource; `PostgreSQLStore.writeCache`); never any on SQLite.
    func writeCache(expiries: [ExpiryKey: Int64], selections: [LoginKey: String?]) throws -> Set<ExpiryKey>
    /// Every stored profile, ordered by key.
    func allProfiles() throws -> [(ProfileKey, StoredProfile)]
    /// Deletes every profile, selection and authorization expiry `selection` takes; returns how many profiles were
    /// deleted (durable).
    func reset(_ selection: LoginSelection) throws -> Int
    /// What other processes changed in the profiles since the last call (`LoginFeed`); `watching` says whether
    /// anyone in this process still cares (PostgreSQL listens only then).
    func externalChanges(watching: Bool) throws -> ExternalChanges
    /// The socket on which other processes' changes arrive while they are listened for (PostgreSQL's connection,
    /// after `externalChanges(watching: true)`), for the worker to wait on; nil when there is none to wait on
    /// (SQLite, which is looked at instead; a connection that failed).
    var notificationSocket: Int32? { get }
    /// Whether this connection already knows of changes the next `externalChanges` will tell, which no socket will
    /// show again: notifications PostgreSQL's client library took in with a query's answer, a reconnect that may
    /// have lost some, another process's commit SQLite's own write came across. The worker then looks before it
    /// sleeps (`StoreExecutor`).
    var changesWaiting: Bool { get }
    /// Whether the connection is known to be gone (PostgreSQL's, until a reconnect); SQLite's never is.
    var connectionLost: Bool { get }
}

extension StoreDatabase {
    /// One authorization expiry written at once (`writeCache`); the engine's go through `TokenStore.submit`.
    func setAuthorizationExpiry(_ notAfter: Int64, _ key: ProfileKey, resource: String) throws {
        _ = try writeCache(expiries: [ExpiryKey(profile: key, resource: resource): notAfter], selections: [:])
    }
}
