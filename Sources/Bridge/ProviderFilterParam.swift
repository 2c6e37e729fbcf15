import AccessEnabler
import JSON
import JSONRPC

extension Params {
    /// getAuthentication's `filter`: an array of MVPD ids (its `TV_PROVIDERS`), or the SDK v2.4+ object
    /// `{TV_PROVIDERS?, FEATURED_TV_PROVIDERS?}`, each an array of MVPD ids; any other key is refused, and so is a
    /// featured id missing from a `TV_PROVIDERS` given beside it (Adobe's "iOS/tvOS API Reference",
    /// getAuthentication:filter: the featured MVPDs must also be TV providers), naming every such id.
    func providerFilter(_ name: String) throws(ErrorObject) -> ProviderFilter? {
        guard let value = value(name) else { return nil }
        if case .object(let members) = value {
            for key in members.keys where key != "TV_PROVIDERS" && key != "FEATURED_TV_PROVIDERS" {
                throw Params.invalid(name, "has an unknown key '\(key)' (TV_PROVIDERS, FEATURED_TV_PROVIDERS)")
            }
            let inner = try Params(value)
            let filter = ProviderFilter(
                tvProviders: try inner.stringArray("TV_PROVIDERS"), featuredTVProviders: try inner.stringArray("FEATURED_TV_PROVIDERS"))
            if let offered = filter.tvProviders, let featured = filter.featuredTVProviders {
                var outside: [String] = []
                for id in featured where !offered.contains(id) && !outside.contains(id) { outside.append(id) }
                if !outside.isEmpty {
                    let names = outside.map { "'\($0)'" }.joined(separator: ", ")
                    throw Params.invalid(
                        name, "FEATURED_TV_PROVIDERS has \(names), not in TV_PROVIDERS (featured MVPDs must be TV providers too)")
                }
            }
            return filter
        }
        guard case .array = value else {
            throw Params.invalid(
                name, "must be an array of MVPD ids or an object {TV_PROVIDERS, FEATURED_TV_PROVIDERS}, not \(value.typeName)")
        }
        return ProviderFilter(tvProviders: try stringArray(name))
    }
}
