import AccessEnabler
import ArgumentParsing
import FoundationEssentials
import JSONRPC
import XCTest

@testable import Bridge

/// `passbridge`'s command line: every option of `DaemonOptions.table` is in `--help` with its value, help and
/// default, parses into its own field, and misuse is a one-line usage error (ARCHITECTURE.md, ArgumentParsing).
final class DaemonOptionsTests: XCTestCase {
    /// For each declared option: a command line giving it a sample value, and whether it reached its field.
    /// A new option without a row here fails `testEveryDeclaredOptionHasASample`.
    private static let samples: [String: (arguments: [String], reached: @Sendable (DaemonOptions) -> Bool)] = [
        "--stdio": (["--stdio"], { $0.transport == .stdio }),
        "--socket": (["--socket", "/run/pb.sock"], { $0.transport == .socket(path: "/run/pb.sock") }),
        // Who may connect is for a socket only (a usage error on stdio: testMissingValueFlagValueAndUnknownOptionAreOneLineUsageErrors).
        "--socket-group": (["--socket", "/run/pb.sock", "--socket-group=1234"], { $0.socketGroup == 1234 }),
        "--allow-uid": (["--socket", "/run/pb.sock", "--allow-uid", "7,8", "--allow-uid=9"], { $0.allowedUIDs == [7, 8, 9] }),
        "--max-message-bytes": (["--max-message-bytes", "4096"], { $0.limits.maxMessageBytes == 4096 }),
        "--shutdown-timeout": (["--shutdown-timeout=0.25"], { $0.limits.shutdownTimeout == .milliseconds(250) }),
        "--stall-timeout": (["--stall-timeout", "30"], { $0.limits.stallTimeout == .seconds(30) }),
        "--backend": (["--backend", "emulator"], { $0.backend == "emulator" }),
        "--staging": (["--staging"], { $0.backend == DaemonOptions.stagingBackend }),
        "--software-statement": (["--software-statement", "@/etc/ss.jwt"], { $0.softwareStatement == "@/etc/ss.jwt" }),
        "--state-dir": (["--state-dir", "/var/lib/pb"], { $0.stateDir == "/var/lib/pb" }),
        "--store": (["--store=postgresql://db/pass"], { $0.store == "postgresql://db/pass" }),
        "--request-timeout": (["--request-timeout", "2.5"], { $0.requestTimeout == .milliseconds(2500) }),
        "--redirect-url": (["--redirect-url", "app://back"], { $0.redirectURL == "app://back" }),
        "--svc-mvpds": (["--svc-mvpds", "MockMVPD, Other"], { $0.svcMVPDs == ["MockMVPD", "Other"] }),
        "--svc-redirect-url": (["--svc-redirect-url", "myapp://svc"], { $0.svcRedirectURL == "myapp://svc" }),
        "--activation-url": (["--activation-url", "https://tv.example/activate"], { $0.activationURL == "https://tv.example/activate" }),
        "--log-level": (["--log-level", "debug"], { $0.logLevel == .debug }),
    ]

    private var declarations: [OptionDeclaration<DaemonOptions, CommandLineError>] { DaemonOptions.table.declarations }

    /// The usage with every run of spaces and newlines made one space, so wrapped help reads as written.
    private static var flatUsage: String { DaemonOptions.usage.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    private func usageError(_ arguments: [String]) -> String? {
        do throws(CommandLineError) {
            _ = try DaemonOptions.parse(arguments)
            return nil
        } catch {
            guard case .usage(let message) = error else { return nil }
            return message
        }
    }

    func testEveryDeclaredOptionHasASample() {
        let names = declarations.map(\.name)
        XCTAssertEqual(names.count, Set(names).count, "an option is declared twice")
        XCTAssertEqual(Set(names), Set(Self.samples.keys))
        XCTAssertEqual(DaemonOptions.table.valued.union(DaemonOptions.table.flags), Set(names))
        XCTAssertTrue(DaemonOptions.table.valued.isDisjoint(with: DaemonOptions.table.flags))
    }

    func testHelpShowsEveryOptionWithItsValueHelpAndDefault() {
        let usage = DaemonOptions.usage
        let defaults = DaemonOptions()
        for declaration in declarations {
            XCTAssertTrue(
                usage.contains("\n  \(declaration.label) ") || usage.contains("\n  \(declaration.label)\n"),
                "\(declaration.label) missing from --help")
            var help = declaration.help
            if let shown = declaration.shownDefault?(defaults) { help += shown.isEmpty ? " (default)" : " (default: \(shown))" }
            XCTAssertTrue(Self.flatUsage.contains("\(declaration.label) \(help)"), "\(declaration.name)'s help or default missing")
        }
        // And nothing in the help that is not declared (besides what CommandLineProgram answers).
        let listed = usage.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  -") else { return nil }
            return line.dropFirst(2).split(separator: " ").first.map { String($0).trimmingCharacters(in: [","]) }
        }
        XCTAssertEqual(Set(listed), Set(declarations.map(\.name)).union(["-h", "--version"]))
    }

    func testHelpDefaultsAreTheInitialValues() {
        let usage = Self.flatUsage
        let defaults = DaemonOptions()
        let bytes = ConnectionLimits().maxMessageBytes
        XCTAssertTrue(usage.contains("--max-message-bytes N Largest accepted message in bytes. (default: \(bytes))"))
        XCTAssertTrue(usage.contains("(default: \(DaemonOptions.secondsText(defaults.requestTimeout)))"))
        XCTAssertTrue(usage.contains("(default: \(defaults.backend))"))
        XCTAssertTrue(usage.contains("(default: \(defaults.logLevel))"))
        XCTAssertEqual(DaemonOptions.secondsText(.seconds(15)), "15")
        XCTAssertEqual(DaemonOptions.secondsText(.milliseconds(2500)), "2.5")
        var changed = defaults
        changed.requestTimeout = .milliseconds(2500)
        changed.limits.stallTimeout = .seconds(42)
        let rendered = DaemonOptions.table.usage(defaults: changed).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(rendered.contains("connecting included. (default: 2.5)"))
        XCTAssertTrue(rendered.contains("reads nothing for this long. (default: 42)"))
    }

    func testEveryOptionParsesItsSampleIntoItsField() throws {
        let defaults = DaemonOptions()
        for (name, sample) in Self.samples {
            let options = try DaemonOptions.parse(sample.arguments)
            XCTAssertTrue(sample.reached(options), "\(sample.arguments) did not reach its field")
            if name != "--stdio" { XCTAssertFalse(sample.reached(defaults), "\(name)'s sample is the default") }
        }
    }

    func testMissingValueFlagValueAndUnknownOptionAreOneLineUsageErrors() {
        for declaration in declarations {
            if declaration.valueName != nil {
                XCTAssertEqual(usageError([declaration.name]), "\(declaration.name) needs a value")
            } else {
                XCTAssertEqual(usageError(["\(declaration.name)=yes"]), "\(declaration.name) takes no value")
            }
        }
        XCTAssertEqual(usageError(["--stdio", "--no-such-flag"]), "unknown option --no-such-flag")
        XCTAssertEqual(usageError(["stray"]), "unexpected argument stray")
        XCTAssertEqual(usageError(["--stdio", "--socket", "/tmp/x"]), "--stdio and --socket cannot be combined")
        XCTAssertEqual(usageError(["--socket-group=1234"]), "--socket-group is for --socket (stdio has no socket to share)")
        XCTAssertEqual(usageError(["--stdio", "--allow-uid", "7"]), "--allow-uid is for --socket (stdio has no socket to share)")
        XCTAssertEqual(usageError(["--backend=http://127.0.0.1:1", "--staging"]), "--staging and --backend cannot be combined")
        XCTAssertEqual(usageError(["--max-message-bytes", "63"]), "--max-message-bytes needs an integer ≥ 64, got 63")
        let form = "a decimal number to the millisecond"
        XCTAssertEqual(usageError(["--stall-timeout", "3601"]), "--stall-timeout needs seconds from 0.001 to 3600, \(form), got '3601'")
        XCTAssertEqual(usageError(["--stall-timeout", "0x10"]), "--stall-timeout needs seconds from 0.001 to 3600, \(form), got '0x10'")
        XCTAssertEqual(usageError(["--request-timeout", "0"]), "--request-timeout needs seconds from 0.001 to 3600, \(form), got '0'")
        XCTAssertEqual(
            usageError(["--shutdown-timeout", "0.0005"]), "--shutdown-timeout needs seconds from 0 to 3600, \(form), got '0.0005'")
        XCTAssertEqual(
            usageError(["--shutdown-timeout", "3600.0000000000000001"]),
            "--shutdown-timeout needs seconds from 0 to 3600, \(form), got '3600.0000000000000001'")
        XCTAssertEqual(usageError(["--log-level", "loud"]), "--log-level must be trace, debug, info, warning or error, got loud")
        XCTAssertEqual(usageError(["--socket="]), "--socket needs a path")
        // The page a phone opens (REGCODE's url): "x" went out as "x?code=…" before.
        for page in ["x", "adobepass://tv", "https://", "http:///activate", "ftp://tv.example/a", "https://tv.example/\u{7}"] {
            XCTAssertEqual(
                usageError(["--activation-url", page]),
                "--activation-url needs an http or https URL, such as https://example.com/activate, got \(page)")
        }
        // As loose as pass-emulator's --public-url, which `passbridge-call dev` makes it from (a breaking pass's
        // `dev --public-url http://télé.local:8080` no longer started).
        for page in ["http://télé.local:8080/activate", "HTTPS://tv.example/a b"] {
            XCTAssertNil(usageError(["--activation-url", page]), page)
        }
    }

    /// SECONDS are read exactly, in whole milliseconds (Arguments.milliseconds).
    func testSecondsAreDecimalNumbersReadToTheMillisecond() {
        let read: [(String, Int64?)] = [
            ("5", 5_000), ("0.25", 250), (".5", 500), ("5.", 5_000), ("0.0010", 1), ("007.100", 7_100), ("3600", 3_600_000),
            ("0", 0), ("0.0005", nil), ("3600.0000000000000001", nil), ("", nil), (".", nil), ("1..5", nil), ("1.5.", nil),
            ("0x10", nil), ("1e1", nil), ("+5", nil), ("-1", nil), (" 5", nil), ("inf", nil), ("٣", nil), ("1000000000", nil),
            ("999999999.999", 999_999_999_999),
        ]
        for (text, milliseconds) in read { XCTAssertEqual(Arguments.milliseconds(text), milliseconds, text) }
    }

    func testUnknownGroupIsAFailureNotAUsageError() {
        do throws(CommandLineError) {
            _ = try DaemonOptions.parse(["--socket-group", "no-such-group-xyz"])
            XCTFail("parsed")
        } catch {
            guard case .failure(let message) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(message, "unknown group no-such-group-xyz for --socket-group")
        }
    }

    func testLastValueWins() throws {
        let options = try DaemonOptions.parse(["--backend", "http://127.0.0.1:1", "--backend=emulator", "--log-level=error"])
        XCTAssertEqual(options.backend, "emulator")
        XCTAssertEqual(options.logLevel, .error)
    }

    func testAValueThatLooksLikeAnOptionIsRefusedUnlessGivenWithEquals() throws {
        XCTAssertEqual(
            usageError(["--socket", "--stdio"]),
            "--socket needs a value, got the option --stdio (write --socket=--stdio if it is the value)")
        XCTAssertEqual(
            usageError(["--software-statement", "-x"]),
            "--software-statement needs a value, got the option -x (write --software-statement=-x if it is the value)")
        XCTAssertEqual(try DaemonOptions.parse(["--software-statement=-x.y.z"]).softwareStatement, "-x.y.z")
        XCTAssertEqual(
            usageError(["--software-statement", "notajwt"]),
            "--software-statement needs a JWT (three base64url parts joined by dots) or @FILE, got 'notajwt'")
        XCTAssertEqual(usageError(["--software-statement", "a.b"])?.hasPrefix("--software-statement needs a JWT"), true)
        XCTAssertEqual(try DaemonOptions.parse(["--software-statement", "@/any/file"]).softwareStatement, "@/any/file")
        XCTAssertEqual(usageError(["--software-statement", "@"]), "--software-statement @FILE needs the file's name after the @")
        XCTAssertEqual(try DaemonOptions.parse(["--state-dir", "-"]).stateDir, "-")
    }

    func testABadBackendOrRedirectURLIsAUsageError() {
        XCTAssertEqual(
            usageError(["--backend", "ftp://example.com"]),
            "--backend needs an https URL (or http to a loopback host, or \"emulator\"), got ftp://example.com")
        XCTAssertEqual(usageError(["--backend", "nonsense"]), "--backend needs an absolute URL or \"emulator\", got nonsense")
        XCTAssertEqual(
            usageError(["--backend", "https://sp.example?x=1"]),
            "--backend needs a base URL, without a user, query or fragment, got https://sp.example?x=1")
        XCTAssertEqual(
            usageError(["--backend", "http://example.com"]),
            "refusing plain http backend http://example.com: only loopback hosts may use http")
        XCTAssertNil(usageError(["--backend", "http://localhost:8080"]))
        XCTAssertEqual(
            usageError(["--redirect-url", "ios.app"]), "--redirect-url needs an absolute URL such as adobepass://ios.app, got ios.app")
        XCTAssertEqual(
            usageError(["--redirect-url", "a b://c"]), "--redirect-url needs an absolute URL such as adobepass://ios.app, got a b://c")
    }

    func testTheRequestTimeoutDefaultIsWrittenOnceInTheEngine() throws {
        XCTAssertEqual(AccessEnablerConfiguration.defaultRequestTimeout, .seconds(15))
        XCTAssertEqual(DaemonOptions().requestTimeout, AccessEnablerConfiguration.defaultRequestTimeout)
        let engine = AccessEnablerConfiguration(backendURL: try BackendURL("https://sp.auth.adobe.com"), softwareStatement: nil)
        XCTAssertEqual(engine.requestTimeout, AccessEnablerConfiguration.defaultRequestTimeout)
    }
}
