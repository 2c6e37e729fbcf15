@testable import AccessEnabler
import XCTest

/// getMetadata's expiry as the SDK's date string (Protocol/README.md, "Values"), for instants on either side of the
/// epoch, on leap days and at the end of the calendar's range.
final class SDKDateTests: XCTestCase {
    func testExpiriesReadAsTheSDKDateStringInGMT() {
        let rows: [(Int64, String)] = [
            (0, "1970/01/01 00:00:00 GMT +0000"),
            (1_796_163_222_443, "2026/12/01 22:13:42 GMT +0000"),
            (1_709_208_000_000, "2024/02/29 12:00:00 GMT +0000"),
            (951_782_400_000, "2000/02/29 00:00:00 GMT +0000"),
            (-1000, "1969/12/31 23:59:59 GMT +0000"),
            (253_402_300_799_000, "9999/12/31 23:59:59 GMT +0000"),
        ]
        for (millis, text) in rows {
            XCTAssertEqual(SDKDate.format(millis: millis), text, "\(millis)")
        }
    }
}
