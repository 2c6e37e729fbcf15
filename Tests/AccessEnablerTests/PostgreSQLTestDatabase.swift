import Foundation
import XCTest

@testable import AccessEnabler

/// A database of its own for one test, on the cluster of PASSBRIDGE_TEST_POSTGRES_URL (`.ci/run` and
/// `Tests/postgres-cluster.sh start` export it); the test is skipped without it.
struct PostgreSQLTestDatabase {
    /// A session on the cluster's own database, for what the test does from outside (ending sessions, dropping).
    let admin: PostgreSQLDatabase
    let name: String
    /// The URL of the test's database.
    let url: String

    init() throws {
        guard let shared = ProcessInfo.processInfo.environment["PASSBRIDGE_TEST_POSTGRES_URL"] else {
            throw XCTSkip("no PostgreSQL cluster: PASSBRIDGE_TEST_POSTGRES_URL is not set (Tests/postgres-cluster.sh start)")
        }
        admin = try PostgreSQLDatabase(url: shared)
        name = "pb_xctest_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try admin.execute("CREATE DATABASE \(name)")
        var components = try XCTUnwrap(URLComponents(string: shared))
        components.path = "/" + name
        url = try XCTUnwrap(components.string)
    }

    func drop() throws { try admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
}
