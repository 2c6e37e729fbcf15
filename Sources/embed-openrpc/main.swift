import Glibc
import JSON

// embed-openrpc INPUT OUTPUT [--version-only]: the build tool of the EmbedOpenRPC plugin. Parses the OpenRPC
// document at INPUT and writes OUTPUT, a Swift file holding the document minified (see `OpenRPC.compactText` in the
// output), the param names of each host→daemon method and `info.version`, the one version of PassBridge (the
// binaries' `--version`, `rpc.discover`, the .deb, the wheel). With --version-only OUTPUT holds just that version,
// as `PackageVersion.string` (internal to the target, for the relay and the emulator). A document that does not
// parse, or lacks `info.version`, fails the build, naming the file.

/// The whole file at `path`, or nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        bytes += chunk[0..<count]
        if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
    }
}

func fail(_ message: String) -> Never {
    let line = Array("embed-openrpc: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// `text` as a Swift raw string literal whose `#` count no run of `#` in the text reaches, so that neither
/// its closing delimiter nor an escape can occur inside.
func rawLiteral(_ text: String) -> String {
    var longest = 0
    var run = 0
    for character in text {
        run = character == "#" ? run + 1 : 0
        longest = max(longest, run)
    }
    let hashes = String(repeating: "#", count: longest + 1)
    return hashes + "\"" + text + "\"" + hashes
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "--version-only") else {
    fail("usage: embed-openrpc INPUT OUTPUT [--version-only]")
}
let (input, output, versionOnly) = (arguments[1], arguments[2], arguments.count == 4)
guard let bytes = readFile(input) else { fail("cannot read \(input): \(String(cString: strerror(errno)))") }
let document: JSON
do {
    document = try JSON.parse(bytes)
} catch {
    fail("\(input) is not JSON: \(error)")
}
guard let methods = document["methods"]?.arrayValue else { fail("\(input) has no methods array") }
guard let version = document["info"]?["version"]?.stringValue, !version.isEmpty else { fail("\(input) has no info.version") }

var paramEntries: [String] = []
for method in methods where method["x-direction"] == nil {
    guard let name = method["name"]?.stringValue else { fail("\(input): a method without a name") }
    let params = (method["params"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
    paramEntries.append("        \(rawLiteral(name)): [\(params.map(rawLiteral).joined(separator: ", "))],")
}
let daemonToHost = methods.filter { $0["x-direction"] != nil }.compactMap { $0["name"]?.stringValue }

let minified = String(decoding: document.serialized(), as: UTF8.self)
let versionOnlySource = """
    // Generated at build time by Plugins/EmbedOpenRPC from Protocol/openrpc.json; never checked in.

    /// PassBridge's version: `info.version` of `Protocol/openrpc.json`, the one place it is written.
    enum PackageVersion {
        static let string = \(rawLiteral(version))
    }

    """
let source =
    versionOnly
    ? versionOnlySource
    : """
    // Generated at build time by Plugins/EmbedOpenRPC from Protocol/openrpc.json; never checked in.

    /// The OpenRPC document of `Protocol/openrpc.json`, compiled in when the package is built: `rpc.discover`
    /// answers with these bytes, and the param names of each method come from it.
    public enum OpenRPC {
        /// `info.version`: PassBridge's one version (`--version`, `rpc.discover`, the .deb and the wheel).
        public static let version = \(rawLiteral(version))

        /// The document minified: no whitespace between tokens, members in the file's order, strings with only
        /// `"`, `\\` and control characters escaped (non-ASCII and `/` as they are). This is
        /// what Python's `json.dumps(document, separators=(",", ":"), ensure_ascii=False)` writes, UTF-8 encoded.
        public static let compactText: [UInt8] = Array(\(rawLiteral(minified)).utf8)

        /// Each host→daemon method (an entry without `x-direction`) → its param names, in the document's order.
        public static let paramNames: [String: [String]] = [
    \(paramEntries.joined(separator: "\n"))
        ]

        /// The names the daemon sends (entries with `x-direction: daemon-to-host`): notifications, and requests the
        /// host answers.
        public static let daemonToHost: Set<String> = [\(daemonToHost.map(rawLiteral).joined(separator: ", "))]
    }

    """
let utf8 = Array(source.utf8)
// An unchanged file is left as it is: SwiftPM runs this tool again whenever the tool is linked again, which it
// does whenever the environment of `swift build` differs from the last build's, and a new modification time
// would make the build compile the whole target again (in a release build, its whole module).
if readFile(output) == utf8 { exit(0) }
guard let file = fopen(output, "wb") else { fail("cannot write \(output): \(String(cString: strerror(errno)))") }
let written = fwrite(utf8, 1, utf8.count, file)
if written != utf8.count || fclose(file) != 0 { fail("cannot write \(output)") }
