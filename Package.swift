// swift-tools-version:6.0
import PackageDescription

// Module graph (ARCHITECTURE.md): JSON → JSONRPC → Bridge ← AccessEnabler; the emulator stands apart.
let package = Package(
    name: "PassBridge",
    products: [
        .executable(name: "passbridge", targets: ["passbridge"]),
        .executable(name: "passbridge-relay", targets: ["passbridge-relay"]),
        .executable(name: "pass-emulator", targets: ["pass-emulator"]),
        .library(name: "AccessEnabler", targets: ["AccessEnabler"]),
    ],
    targets: [
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CShims"),
        // Opened with dlopen when first used: libcurl by the first request, libpq by a PostgreSQL store, SQLite by
        // the first call that opens the state directory's database, libcrypto by the first digest or base64 (headers
        // from libcurl4-openssl-dev, libpq-dev, libsqlite3-dev and libssl-dev).
        .target(name: "CCurl"),
        .target(name: "CSQLite"),
        .target(name: "CPostgreSQL"),
        .target(name: "CDigest"),

        .target(name: "ArgumentParsing"),
        .target(name: "ThreadAffinity"),
        .target(name: "JSON", dependencies: ["CJansson"]),
        .target(name: "JSONRPC", dependencies: ["JSON", "ArgumentParsing", "CShims", "ThreadAffinity"]),
        .target(
            name: "AccessEnabler", dependencies: ["JSON", "CSQLite", "CPostgreSQL", "CDigest", "CCurl", "ThreadAffinity"],
            exclude: ["README.md"]),
        .target(
            name: "Bridge", dependencies: ["JSONRPC", "AccessEnabler", "ArgumentParsing", "CShims", "ThreadAffinity"],
            plugins: ["EmbedOpenRPC"]),
        // Protocol/openrpc.json compiled into Bridge at build time; its info.version (the one version of PassBridge)
        // also into the relay and the emulator.
        .executableTarget(name: "embed-openrpc", dependencies: ["JSON"]),
        .plugin(name: "EmbedOpenRPC", capability: .buildTool(), dependencies: ["embed-openrpc"]),
        // Release builds link with lld and packed relative relocations, and (with --static-swift-stdlib) take
        // libstdc++ statically through the linker script in Sources/passbridge/link: less to map and relocate at
        // start-up (Bench/README.md, "Start-up and idle memory").
        .executableTarget(
            name: "passbridge", dependencies: ["Bridge", "ArgumentParsing", "CShims", "JSON"], exclude: ["link"],
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                        "-L", Context.packageDirectory + "/Sources/passbridge/link",
                    ], .when(configuration: .release))
            ]),
        .executableTarget(name: "passbridge-relay", dependencies: ["JSONRPC", "ArgumentParsing"], plugins: ["EmbedOpenRPC"]),
        // The daemon with extra methods for the transport tests; not a product.
        .executableTarget(name: "passbridge-test-daemon", dependencies: ["Bridge", "ArgumentParsing"], path: "Tests/TestDaemon"),

        .target(
            name: "PassEmulator", dependencies: ["JSON", "ArgumentParsing", "CMicroHTTPD", "COpenSSL"],
            exclude: ["README.md", "default-config.json"], plugins: ["EmbedOpenRPC"]),
        .executableTarget(name: "pass-emulator", dependencies: ["PassEmulator"]),

        .executableTarget(name: "passbridge-bench", dependencies: ["JSON", "CShims"], path: "Bench/Sources/passbridge-bench"),

        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "passbridge"]),
        .testTarget(name: "PassEmulatorTests", dependencies: ["PassEmulator", "pass-emulator"]),
        // The store tests also open the database with SQLite itself, linked.
        .testTarget(
            name: "AccessEnablerTests", dependencies: ["AccessEnabler", "pass-emulator", "passbridge"],
            linkerSettings: [.linkedLibrary("sqlite3")]),
        .testTarget(name: "BridgeTests", dependencies: ["Bridge", "passbridge", "pass-emulator"]),
    ]
)
