import Foundation
import JSON

/// A configuration error: what is wrong and where (a JSON path such as `serviceProviders[0].mvpds[1].id`).
public struct ConfigError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// The emulator's behaviour, read from JSON (format in Sources/PassEmulator/README.md). The default
/// configuration is `default-config.json` (compiled in) and is described in README.md next to this file.
public struct EmulatorConfig: Sendable {
    /// DCR access-token lifetime in seconds (default 21600).
    public var accessTokenTTLSeconds: Int64
    /// Accepted software statements; empty = any well-formed three-part JWT.
    public var softwareStatements: [String]
    public var serviceProviders: [ServiceProviderConfig]
    public var users: [UserConfig]
    /// The built-in throttle, or nil (the default) for none.
    public var throttle: ThrottleSettings?

    /// The service provider (requestor) with this id.
    public func serviceProvider(_ id: String) -> ServiceProviderConfig? { serviceProviders.first { $0.id == id } }

    /// The user with these credentials who may log in at `mvpd`.
    public func user(_ username: String, password: String, mvpd: String) -> UserConfig? {
        users.first { $0.username == username && $0.password == password && $0.mvpds.contains(mvpd) }
    }

    /// The user named `username`.
    public func user(named username: String) -> UserConfig? { users.first { $0.username == username } }

    /// Parses a configuration document.
    public init(json: JSON) throws(ConfigError) {
        let reader = Reader(json, path: "")
        accessTokenTTLSeconds = try reader.int("accessTokenTTLSeconds", default: 21600)
        softwareStatements = try reader.strings("softwareStatements")
        serviceProviders = try reader.objects("serviceProviders").map { reader throws(ConfigError) in try ServiceProviderConfig(reader) }
        users = try reader.objects("users").map { reader throws(ConfigError) in try UserConfig(reader) }
        throttle = try reader.child("throttle").map { reader throws(ConfigError) in try ThrottleSettings(reader) }
        guard !serviceProviders.isEmpty else { throw ConfigError(message: "serviceProviders: at least one is needed") }
    }

    /// Reads and parses a configuration file.
    public static func load(path: String) throws(ConfigError) -> EmulatorConfig {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigError(message: "cannot read \(path)") }
        do {
            return try EmulatorConfig(json: try JSON.parse([UInt8](data)))
        } catch let error as JSONParseError {
            throw ConfigError(message: "\(path): \(error)")
        } catch let error as ConfigError {
            throw ConfigError(message: "\(path): \(error.message)")
        } catch {
            throw ConfigError(message: "\(path): \(error)")
        }
    }

    /// The configuration shipped inside the package (the table in README.md next to this file): `default-config.json`, compiled in
    /// as ``DefaultConfig`` so an installed binary needs no data files (a test keeps the two identical).
    public static func builtIn() throws(ConfigError) -> EmulatorConfig {
        do {
            return try EmulatorConfig(json: try JSON.parse(DefaultConfig.text))
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError(message: "built-in configuration: \(error)")
        }
    }
}

/// One service provider (requestor) and its integrations.
public struct ServiceProviderConfig: Sendable {
    public var id: String
    public var name: String
    public var domains: [(name: String, mvpdInitiated: Bool)]
    public var mvpds: [MVPDConfig]
    /// Regular profile lifetime, seconds (default 86400).
    public var profileTTLSeconds: Int64
    /// Authentication code lifetime, seconds (default 1800).
    public var codeTTLSeconds: Int64
    /// Media token lifetime, seconds (default 420).
    public var mediaTokenTTLSeconds: Int64
    /// How long a decision stays valid (decision `notAfter`), seconds (default 86400).
    public var authorizationTTLSeconds: Int64
    /// Most resources per authorize / preauthorize call; 0 = no limit.
    public var maxAuthorizeResources: Int
    public var maxPreauthorizeResources: Int
    /// Client software statements allowed here; empty = every client.
    public var softwareStatements: [String]

    public func mvpd(_ id: String) -> MVPDConfig? { mvpds.first { $0.id == id } }
    /// The MVPD whose platformMappingId is `mappingId`.
    public func mvpd(platformMappingId mappingId: String) -> MVPDConfig? { mvpds.first { $0.platformMappingId == mappingId } }

    init(_ reader: Reader) throws(ConfigError) {
        id = try reader.string("id")
        name = try reader.string("name", default: id)
        domains = try reader.objects("domains").map { reader throws(ConfigError) in
            (try reader.string("name"), try reader.bool("mvpdInitiated", default: false))
        }
        if domains.isEmpty { domains = [("adobe.com", false)] }
        mvpds = try reader.objects("mvpds").map { reader throws(ConfigError) in try MVPDConfig(reader) }
        profileTTLSeconds = try reader.int("profileTTLSeconds", default: 86400)
        codeTTLSeconds = try reader.int("codeTTLSeconds", default: 1800)
        mediaTokenTTLSeconds = try reader.int("mediaTokenTTLSeconds", default: 420)
        authorizationTTLSeconds = try reader.int("authorizationTTLSeconds", default: 86400)
        maxAuthorizeResources = Int(try reader.int("maxAuthorizeResources", default: 0))
        maxPreauthorizeResources = Int(try reader.int("maxPreauthorizeResources", default: 0))
        softwareStatements = try reader.strings("softwareStatements")
    }
}

/// One MVPD integration. `tempPassSeconds` makes it a TempPass pseudo-MVPD; `degradation` applies a rule.
public struct MVPDConfig: Sendable {
    public var id: String
    public var displayName: String
    public var logoUrl: String
    /// TempPass duration in seconds, or nil for a regular MVPD.
    public var tempPassSeconds: Int64?
    /// A promotional TempPass: its trials are keyed by the `AP-TempPass-Identity` value (or the device).
    public var promotional: Bool
    /// Promotional TempPass: how many distinct resources a trial may be granted; 0 = no limit.
    public var maxResources: Int
    /// `AuthNAll`, `AuthZAll` or `AuthZNone`, or nil.
    public var degradation: String?
    /// Custom text for AuthZNone denials (`details`).
    public var degradationMessage: String?
    /// Whether the MVPD has a logout endpoint (L1 answers `logout`); else L1 answers `complete`.
    public var hasLogout: Bool
    public var platformMappingId: String?
    public var enablePlatformServices: Bool
    public var boardingStatus: String?
    public var displayInPlatformPicker: Bool
    /// The MVPD's pages must open in a Safari View Controller: sent as `requiresSVC: true` in the configuration
    /// answer (PassBridge's own member; REST API V2's MVPD object has none for it).
    public var requiresSVC: Bool
    /// Partner frameworks (e.g. `Apple`) this MVPD exchanges profiles with; needs boardingStatus SUPPORTED.
    public var partnerSSO: [String]

    public var isTempPass: Bool { tempPassSeconds != nil }

    /// Whether partner SSO through `partner` is fully boarded for this MVPD.
    public func supportsPartnerSSO(_ partner: String) -> Bool {
        partnerSSO.contains(partner) && enablePlatformServices && boardingStatus == "SUPPORTED"
    }

    init(_ reader: Reader) throws(ConfigError) {
        id = try reader.string("id")
        displayName = try reader.string("displayName", default: id)
        logoUrl = try reader.string("logoUrl", default: "https://entitlement.auth.adobe.com/entitlement/noLogo.png")
        tempPassSeconds = try reader.optionalInt("tempPassSeconds")
        promotional = try reader.bool("promotional", default: false)
        maxResources = Int(try reader.int("maxResources", default: 0))
        if promotional, tempPassSeconds == nil { throw reader.fail("promotional", "needs tempPassSeconds") }
        if maxResources > 0, !promotional { throw reader.fail("maxResources", "applies to a promotional TempPass only") }
        degradation = try reader.optionalString("degradation")
        if let rule = degradation, !["AuthNAll", "AuthZAll", "AuthZNone"].contains(rule) {
            throw ConfigError(message: "\(reader.path).degradation: expected AuthNAll, AuthZAll or AuthZNone")
        }
        degradationMessage = try reader.optionalString("degradationMessage")
        hasLogout = try reader.bool("logout", default: true)
        platformMappingId = try reader.optionalString("platformMappingId")
        enablePlatformServices = try reader.bool("enablePlatformServices", default: false)
        boardingStatus = try reader.optionalString("boardingStatus")
        displayInPlatformPicker = try reader.bool("displayInPlatformPicker", default: false)
        requiresSVC = try reader.bool("requiresSVC", default: false)
        partnerSSO = try reader.strings("partnerSSO")
    }
}

/// A mock MVPD subscriber: credentials, the MVPDs that know them, profile attributes and entitlements.
public struct UserConfig: Sendable {
    public var username: String
    public var password: String
    public var mvpds: [String]
    /// IssuedProfile attributes: name → `{value, state: plain|enc}` (an `enc` value is sent base64-wrapped).
    public var attributes: JSONObject
    /// Resource id (byte for byte) → entitlement.
    public var entitlements: [ResourceKey: Entitlement]
    /// Decision for a resource not listed in `entitlements`.
    public var permitUnlisted: Bool

    /// Whether a resource is permitted, with the MVPD's denial text when it is not.
    public struct Entitlement: Sendable {
        public var permit: Bool
        public var details: String?
    }

    init(_ reader: Reader) throws(ConfigError) {
        username = try reader.string("username")
        password = try reader.string("password")
        mvpds = try reader.strings("mvpds")
        attributes = try reader.object("attributes") ?? JSONObject()
        var entitlements: [ResourceKey: Entitlement] = [:]
        for (resource, value) in try reader.object("entitlements") ?? JSONObject() {
            let item = Reader(value, path: "\(reader.path).entitlements.\(resource)")
            entitlements[ResourceKey(resource)] = Entitlement(
                permit: try item.bool("permit", default: false), details: try item.optionalString("details"))
        }
        self.entitlements = entitlements
        permitUnlisted = try reader.bool("permitUnlisted", default: false)
    }
}

/// Typed access to a JSON object with path-bearing errors.
struct Reader {
    let json: JSON
    let path: String
    init(_ json: JSON, path: String) { self.json = json; self.path = path }

    func fail(_ key: String, _ what: String) -> ConfigError { ConfigError(message: "\(path.isEmpty ? "" : path + ".")\(key): \(what)") }

    func string(_ key: String, default fallback: String? = nil) throws(ConfigError) -> String {
        if let value = try optionalString(key) { return value }
        if let fallback { return fallback }
        throw fail(key, "required string missing")
    }
    func optionalString(_ key: String) throws(ConfigError) -> String? {
        guard let value = json[key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw fail(key, "expected a string") }
        return text
    }
    func int(_ key: String, default fallback: Int64) throws(ConfigError) -> Int64 { try optionalInt(key) ?? fallback }
    func optionalInt(_ key: String) throws(ConfigError) -> Int64? {
        guard let value = json[key], !value.isNull else { return nil }
        guard let number = value.int64Value, number >= 0 else { throw fail(key, "expected a non-negative integer") }
        return number
    }
    func double(_ key: String, default fallback: Double) throws(ConfigError) -> Double {
        guard let value = json[key], !value.isNull else { return fallback }
        guard let number = value.doubleValue else { throw fail(key, "expected a number") }
        return number
    }
    func bool(_ key: String, default fallback: Bool) throws(ConfigError) -> Bool {
        guard let value = json[key], !value.isNull else { return fallback }
        guard let flag = value.boolValue else { throw fail(key, "expected a boolean") }
        return flag
    }
    func strings(_ key: String) throws(ConfigError) -> [String] {
        guard let value = json[key], !value.isNull else { return [] }
        guard let items = value.arrayValue else { throw fail(key, "expected an array of strings") }
        var result: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw fail(key, "expected an array of strings") }
            result.append(text)
        }
        return result
    }
    func object(_ key: String) throws(ConfigError) -> JSONObject? {
        guard let value = json[key], !value.isNull else { return nil }
        guard let object = value.objectValue else { throw fail(key, "expected an object") }
        return object
    }
    /// The object at `key` as a reader, or nil when absent.
    func child(_ key: String) throws(ConfigError) -> Reader? {
        guard try object(key) != nil, let value = json[key] else { return nil }
        return Reader(value, path: "\(path.isEmpty ? "" : path + ".")\(key)")
    }
    func objects(_ key: String) throws(ConfigError) -> [Reader] {
        guard let value = json[key], !value.isNull else { return [] }
        guard let items = value.arrayValue else { throw fail(key, "expected an array of objects") }
        var result: [Reader] = []
        for (index, item) in items.enumerated() {
            guard item.objectValue != nil else { throw fail("\(key)[\(index)]", "expected an object") }
            result.append(Reader(item, path: "\(path.isEmpty ? "" : path + ".")\(key)[\(index)]"))
        }
        return result
    }
}
