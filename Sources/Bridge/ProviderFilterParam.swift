import AccessEnabler
import JSON
import JSONRPC

extension Params {
    /// getAuthentication's `filter`: an array of MVPD ids (its `TV_PROVIDERS`), or the SDK v2.4+ object
    /// `{TV_PROVIDERS?, FEATURED_TV_PROVIDERS?}`, each an array of MVPD ids; any other key is refused.
    func providerFilter(_ name: String) throws(ErrorObject) -> ProviderFilter? {
        guard let value = value(name) else { return nil }
        if case .object(let members) = value {
            for key in members.keys where key != "TV_PROVIDERS" && key != "FEATURED_TV_PROVIDERS" {
                throw Params.invalid(name, "has an unknown key '\(key)' (TV_PROVIDERS, FEATURED_TV_PROVIDERS)")
            }
            let inner = try Params(value)
            return ProviderFilter(
                tvProviders: try inner.stringArray("TV_PROVIDERS"), featuredTVProviders: try inner.stringArray("FEATURED_TV_PROVIDERS"))
        }
        guard case .array = value else {
            throw Params.invalid(
                name, "must be an array of MVPD ids or an object {TV_PROVIDERS, FEATURED_TV_PROVIDERS}, not \(value.typeName)")
        }
        return ProviderFilter(tvProviders: try stringArray(name))
    }
}
