/// getAuthentication's `filter`: the MVPDs the platform's picker (partner SSO) offers. The SDK applies it to that
/// picker only; the provider dialog (displayProviderDialog) always lists every MVPD of the requestor.
/// MVPD ids without partner SSO are ignored, and the order given is kept.
public struct ProviderFilter: Sendable, Equatable {
    /// `TV_PROVIDERS`: the MVPD ids the platform picker offers (nil: every MVPD boarded for partner SSO).
    public var tvProviders: [String]?
    /// `FEATURED_TV_PROVIDERS`: the MVPD ids it features (nil: those the configuration features).
    public var featuredTVProviders: [String]?

    public init(tvProviders: [String]?, featuredTVProviders: [String]? = nil) {
        self.tvProviders = tvProviders
        self.featuredTVProviders = featuredTVProviders
    }
}
