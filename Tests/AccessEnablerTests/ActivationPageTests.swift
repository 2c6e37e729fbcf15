import FoundationEssentials
import XCTest

@testable import AccessEnabler

/// REGCODE's `url` when an activation page is configured (`AccessEnablerConfiguration.activationPage`): the page with
/// the code as `code=`, joined by `?` or `&`, before any fragment; none configured, none made up. And
/// `authenticateUrl`'s path escapes the requestor and the code as one segment each.
final class ActivationPageTests: XCTestCase {
    private func page(_ activation: String?, code: String = "AB12CD") -> String? {
        var configuration = AccessEnablerConfiguration(backendURL: try! BackendURL("https://sp.auth.adobe.com"), softwareStatement: nil)
        configuration.activationURL = activation
        return configuration.activationPage(code: code)
    }

    func testTheCodeIsAddedToTheConfiguredPage() {
        XCTAssertEqual(page("https://tv.example/activate"), "https://tv.example/activate?code=AB12CD")
        XCTAssertEqual(page("https://tv.example/activate?brand=x"), "https://tv.example/activate?brand=x&code=AB12CD")
        XCTAssertEqual(page("https://tv.example/activate?"), "https://tv.example/activate?code=AB12CD")
        XCTAssertEqual(page("https://tv.example/a#top"), "https://tv.example/a?code=AB12CD#top")
        XCTAssertEqual(page("https://tv.example/a", code: "A B&C"), "https://tv.example/a?code=A%20B%26C")
    }

    func testNoPageConfiguredIsNoPage() {
        XCTAssertNil(page(nil))
    }

    func testTheAuthenticatePathEscapesEachSegment() {
        XCTAssertEqual(RESTV2.authenticatePath("REF", code: "AB12CD"), "/api/v2/authenticate/REF/AB12CD")
        XCTAssertEqual(RESTV2.authenticatePath("R/E F", code: "a?b"), "/api/v2/authenticate/R%2FE%20F/a%3Fb")
        // A dot segment is escaped: libcurl would remove it, and the path would name another resource.
        XCTAssertEqual(RESTV2.authenticatePath("..", code: "."), "/api/v2/authenticate/%2E%2E/%2E")
        XCTAssertEqual(RESTV2.authenticatePath("...", code: ".a"), "/api/v2/authenticate/.../.a")
    }
}
