import Foundation
import JSON
import XCTest

@testable import PassEmulator

/// The shipped configuration is exactly the table of Sources/PassEmulator/README.md.
final class DefaultConfigTests: XCTestCase {
    func testDefaultConfigurationMatchesTheDesignTable() throws {
        let config = try EmulatorConfig.builtIn()
        XCTAssertEqual(config.accessTokenTTLSeconds, 21600)
        XCTAssertTrue(config.softwareStatements.isEmpty)
        let sp = try XCTUnwrap(config.serviceProvider("REF"))
        XCTAssertEqual(sp.name, "Reference Programmer")
        XCTAssertEqual(sp.mvpds.map(\.id), ["MockMVPD", "TempPass", "MockSSO", "MockPicker"])
        XCTAssertEqual(sp.mvpds.map(\.displayName), ["Mock Cable", "Free Preview", "Mock SSO TV", "Mock Picker TV"])
        XCTAssertEqual(sp.profileTTLSeconds, 86400)
        XCTAssertEqual(sp.mediaTokenTTLSeconds, 420)
        XCTAssertEqual(sp.codeTTLSeconds, 1800)
        XCTAssertEqual(sp.mvpd("TempPass")?.tempPassSeconds, 180)
        let sso = try XCTUnwrap(sp.mvpd("MockSSO"))
        XCTAssertTrue(sso.supportsPartnerSSO("Apple"))
        XCTAssertEqual(sso.platformMappingId, "MockSSO")
        XCTAssertTrue(sso.displayInPlatformPicker)
        let picker = try XCTUnwrap(sp.mvpd("MockPicker"))
        XCTAssertEqual(picker.boardingStatus, "PICKER")
        XCTAssertFalse(picker.supportsPartnerSSO("Apple"))
        for mvpd in ["MockMVPD", "MockSSO", "MockPicker"] {
            let user = try XCTUnwrap(config.user("demo", password: "demo", mvpd: mvpd))
            XCTAssertEqual(user.entitlements["ch1"]?.permit, true)
            XCTAssertEqual(user.entitlements["ch2"]?.permit, false)
            XCTAssertEqual(user.entitlements["ch2"]?.details, "Your subscription does not include \"Channel 2\".")
        }
        XCTAssertNil(config.user("demo", password: "demo", mvpd: "TempPass"))
        let user = try XCTUnwrap(config.user(named: "demo"))
        XCTAssertEqual(user.attributes["zip"]?["state"], "enc")
        XCTAssertEqual(user.attributes["householdID"]?["state"], "plain")
        XCTAssertNil(config.throttle)
    }

    func testSecondRequestorKeepsREFsMVPDsThenAddsPromotionalAndDegraded() throws {
        let config = try EmulatorConfig.builtIn()
        XCTAssertEqual(config.serviceProviders.map(\.id), ["REF", "REF2"])
        let ref = try XCTUnwrap(config.serviceProvider("REF"))
        let ref2 = try XCTUnwrap(config.serviceProvider("REF2"))
        XCTAssertEqual(ref2.name, "Reference Programmer 2")
        XCTAssertTrue(ref.softwareStatements.isEmpty && ref2.softwareStatements.isEmpty)  // one application's client serves both
        XCTAssertEqual(Array(ref2.mvpds.prefix(4)).map(\.id), ref.mvpds.map(\.id))
        XCTAssertEqual(ref2.mvpds.dropFirst(4).map(\.id), ["PromoTempPass", "DegradedAuthN", "DegradedAuthZ"])
        let promo = try XCTUnwrap(ref2.mvpd("PromoTempPass"))
        XCTAssertTrue(promo.promotional && promo.isTempPass)
        XCTAssertEqual(promo.tempPassSeconds, 600)
        XCTAssertEqual(promo.maxResources, 2)
        XCTAssertFalse(promo.hasLogout)
        XCTAssertEqual(ref2.mvpd("DegradedAuthN")?.degradation, "AuthNAll")
        XCTAssertEqual(ref2.mvpd("DegradedAuthZ")?.degradation, "AuthZAll")
        XCTAssertNotNil(config.user("demo", password: "demo", mvpd: "DegradedAuthZ"))
        XCTAssertNil(config.user("demo", password: "demo", mvpd: "DegradedAuthN"))
    }

    func testPromotionalNeedsTempPassSecondsAndMaxResourcesNeedsPromotional() {
        let promo: JSON = ["serviceProviders": [["id": "X", "mvpds": [["id": "P", "promotional": true]]]]]
        XCTAssertThrowsError(try EmulatorConfig(json: promo)) { error in
            XCTAssertEqual((error as? ConfigError)?.message, "serviceProviders[0].mvpds[0].promotional: needs tempPassSeconds")
        }
        let limited: JSON = ["serviceProviders": [["id": "X", "mvpds": [["id": "P", "tempPassSeconds": 60, "maxResources": 3]]]]]
        XCTAssertThrowsError(try EmulatorConfig(json: limited)) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.message, "serviceProviders[0].mvpds[0].maxResources: applies to a promotional TempPass only")
        }
    }

    func testCompiledInCopyEqualsTheShippedFile() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/PassEmulator/default-config.json").standardized.path
        let file = try JSON.parse([UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path))))
        XCTAssertEqual(try JSON.parse(DefaultConfig.text), file)
    }

    func testBadConfigurationNamesThePath() {
        let json: JSON = ["serviceProviders": [["id": "X", "mvpds": [["id": "M", "degradation": "Sometimes"]]]]]
        XCTAssertThrowsError(try EmulatorConfig(json: json)) { error in
            XCTAssertEqual(
                (error as? ConfigError)?.message, "serviceProviders[0].mvpds[0].degradation: expected AuthNAll, AuthZAll or AuthZNone")
        }
        XCTAssertThrowsError(try EmulatorConfig(json: ["serviceProviders": []]))
    }
}
