import JSON

extension Emulator {
    /// Whether `mvpd` has platform services (single sign-on) under service provider `sp`: as configured, unless
    /// `POST /__admin/platform-services` switched them off.
    func platformServices(of mvpd: MVPDConfig, in sp: String) -> Bool {
        mvpd.enablePlatformServices && !state.withLock { $0.platformServicesOff.contains(MVPDKey(serviceProvider: sp, mvpd: mvpd.id)) }
    }

    /// `GET /api/v2/{sp}/configuration` (Adobe Pass REST API V2, "Retrieve configuration"): the requestor with its MVPDs nested inside.
    func configuration(_ request: HTTPRequest, _ sp: String) throws(Failure) -> HTTPResponse {
        let caller = try caller(request, sp, device: false)
        let provider = caller.serviceProvider
        let os = caller.deviceInfo?["osName"]?.stringValue ?? "Unknown"
        let mvpds: [JSON] = provider.mvpds.map { mvpd in
            var object: JSONObject = ["id": .string(mvpd.id), "displayName": .string(mvpd.displayName), "logoUrl": .string(mvpd.logoUrl)]
            if mvpd.isTempPass { object["isTempPass"] = true }
            if let id = mvpd.platformMappingId { object["platformMappingId"] = .string(id) }
            if platformServices(of: mvpd, in: provider.id) { object["enablePlatformServices"] = true }
            if let status = mvpd.boardingStatus { object["boardingStatus"] = .string(status) }
            if mvpd.displayInPlatformPicker { object["displayInPlatformPicker"] = true }
            if mvpd.requiresSVC { object["requiresSVC"] = true }
            return .object(object)
        }
        let domains: [JSON] = provider.domains.map { .object(["name": .string($0.name), "mvpdInitiated": .bool($0.mvpdInitiated)]) }
        return .json(
            200,
            [
                "device": "unknown",
                "clientType": "restApiV2",
                "os": .string(os),
                "platform": .string(os),
                "platformCategory": "unknown",
                "sdkType": "restApiV2",
                "requestor": .object([
                    "id": .string(provider.id), "name": .string(provider.name), "domains": .array(domains), "mvpds": .array(mvpds),
                ]),
            ])
    }
}
