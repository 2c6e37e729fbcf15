/// The logins of one application on one device, across its requestors (what the SDK's logout clears).
extension TokenStore {
    /// The keys of the profiles stored for `device` under one of `scopes` by requestors other than `requestor`.
    func otherRequestorsProfiles(
        isolation: isolated (any Actor)? = #isolation, scopes: Set<StoreScope>, device: String, requestor: String
    ) async throws -> [ProfileKey] {
        try await executor.run(isolation: isolation) { try $0.allProfiles() }.map(\.0).filter {
            scopes.contains($0.login.scope) && $0.login.device == device && $0.login.requestor != requestor
        }
    }
}
