import Foundation
import JSON

/// One promotional TempPass trial (Adobe's TempPass feature page): limited in time and in distinct resources, and
/// identified by the hash of the `AP-TempPass-Identity` value or by the device: a trial exists for a caller when
/// either its identity or its device has one. Times in ms.
struct PromoTrial {
    var identity: String
    var devices: Set<String>
    var start: Int64
    /// Resource ids granted so far, in order (the profile's `used_assets`).
    var usedAssets: [String]
}

/// Where promotional trials live: per service provider and TempPass MVPD.
struct TempPassScope: Hashable {
    var serviceProvider: String
    var mvpd: String
}

extension Emulator {
    /// The identity behind `AP-TempPass-Identity` (base64 of a JSON object, e.g. `{"email": "…"}`) as a SHA-256 hex
    /// string; nil when the header is absent. An unreadable value is 400 `invalid_header_identity_for_temporary_access`.
    static func tempPassIdentity(_ request: HTTPRequest) throws(Failure) -> String? {
        guard let header = request.header("ap-temppass-identity") else { return nil }
        guard let data = Base64.decode(header) ?? Base64.decodeURL(header), let json = try? JSON.parse([UInt8](data)),
            let object = json.objectValue, !object.isEmpty
        else { throw Failure("invalid_header_identity_for_temporary_access") }
        return Digest.sha256Hex(json.serializedString())
    }

    /// The identity a promotional call must carry (400 `invalid_header_identity_for_temporary_access` without it).
    static func requiredTempPassIdentity(_ request: HTTPRequest) throws(Failure) -> String {
        guard let identity = try tempPassIdentity(request) else { throw Failure("invalid_header_identity_for_temporary_access") }
        return identity
    }

    /// The trial of `identity` (else of `device`) at `mvpd`; with `startAt`, a new one starts then when none exists,
    /// and a known trial learns this device.
    func promoTrial(_ sp: String, _ mvpd: String, identity: String?, device: String?, startAt now: Int64? = nil) -> PromoTrial? {
        let scope = TempPassScope(serviceProvider: sp, mvpd: mvpd)
        return state.withLock { state in
            var trials = state.promoTrials[scope] ?? []
            let index = trials.firstIndex { $0.identity == identity } ?? trials.firstIndex { device != nil && $0.devices.contains(device!) }
            if let index {
                if now != nil, let device { trials[index].devices.insert(device) }
                state.promoTrials[scope] = trials
                return trials[index]
            }
            guard let now, let identity else { return nil }
            let trial = PromoTrial(identity: identity, devices: device.map { [$0] } ?? [], start: now, usedAssets: [])
            state.promoTrials[scope, default: []].append(trial)
            return trial
        }
    }

    /// Why `trial` grants no new resource at `now`: `temporary_access_duration_limit_exceeded`,
    /// `temporary_access_resources_limit_exceeded`, or nil.
    func promoLimit(_ trial: PromoTrial, _ mvpd: MVPDConfig, now: Int64) -> String? {
        if now >= trial.start + (mvpd.tempPassSeconds ?? 0) * 1000 { return "temporary_access_duration_limit_exceeded" }
        if mvpd.maxResources > 0, trial.usedAssets.count >= mvpd.maxResources { return "temporary_access_resources_limit_exceeded" }
        return nil
    }

    /// The decisions of a promotional TempPass: each resource is permitted while the trial lasts if it was granted
    /// before or a resource is left; authorize starts the trial and records what it grants, preauthorize does neither.
    func promoVerdicts(
        _ caller: Caller, _ mvpd: MVPDConfig, resources: [String], authorize: Bool, request: HTTPRequest
    )
        throws(Failure) -> (verdicts: [Verdict], userID: String)
    {
        let identity = authorize ? try Self.requiredTempPassIdentity(request) : try Self.tempPassIdentity(request)
        let sp = caller.serviceProvider.id
        guard var trial = promoTrial(sp, mvpd.id, identity: identity, device: caller.deviceID, startAt: authorize ? caller.now : nil) else {
            return (resources.map { _ in .permit }, "temppass|\(identity ?? caller.deviceID ?? "")")
        }
        var verdicts: [Verdict] = []
        for resource in resources {
            let id = ResourceMatcher.id(of: resource)
            if let limit = promoLimit(trial, mvpd, now: caller.now),
                limit != "temporary_access_resources_limit_exceeded" || !trial.usedAssets.contains(id)
            {
                verdicts.append(.deny(code: limit, details: nil))
                continue
            }
            if !trial.usedAssets.contains(id) { trial.usedAssets.append(id) }
            verdicts.append(.permit)
        }
        if authorize {
            let scope = TempPassScope(serviceProvider: sp, mvpd: mvpd.id)
            let granted = trial
            state.withLock { state in
                if let index = state.promoTrials[scope]?.firstIndex(where: { $0.identity == granted.identity }) {
                    state.promoTrials[scope]?[index].usedAssets = granted.usedAssets
                }
            }
        }
        return (verdicts, "temppass|\(trial.identity)")
    }

    /// The `temporary` profile of a promotional trial, or a 403 once it is over (time, or every resource used).
    /// `identity` nil: found by device only (the all-profiles call, which takes no identity header).
    func promoProfile(_ caller: Caller, _ mvpd: MVPDConfig, identity: String?) throws(Failure) -> IssuedProfile? {
        guard let trial = promoTrial(caller.serviceProvider.id, mvpd.id, identity: identity, device: caller.deviceID) else { return nil }
        if let limit = promoLimit(trial, mvpd, now: caller.now) { throw Failure(limit) }
        let end = trial.start + (mvpd.tempPassSeconds ?? 0) * 1000
        var attributes: JSONObject = [
            "expiration_date": .object(["value": .integer(end), "state": "plain"]),
            "used_assets": .object(["value": .array(trial.usedAssets.map(JSON.string)), "state": "plain"]),
            "userID": .object(["value": .string("temppass_" + String(trial.identity.prefix(40))), "state": "plain"]),
        ]
        if mvpd.maxResources > 0 {
            attributes["remaining_resources"] = .object([
                "value": .integer(Int64(mvpd.maxResources - trial.usedAssets.count)), "state": "plain",
            ])
        }
        return IssuedProfile(
            mvpd: mvpd.id, type: "temporary", issuer: "Adobe", notBefore: trial.start, notAfter: end, attributes: attributes, username: nil)
    }
}
