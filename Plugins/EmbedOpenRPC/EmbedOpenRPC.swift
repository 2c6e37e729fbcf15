import PackagePlugin

/// Compiles `Protocol/openrpc.json` into the target that uses this plugin (Bridge) at build time: the
/// `embed-openrpc` tool writes `OpenRPCDocument.swift` into the plugin's work directory, so the document is kept
/// in one place and the binary needs no data file beside it. Its `info.version` is PassBridge's one version: Bridge
/// gets it as `OpenRPC.version`; any other target using this plugin (the relay, the emulator) gets only that, as
/// `PackageVersion.string`.
@main
struct EmbedOpenRPC: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let document = context.package.directoryURL.appending(path: "Protocol/openrpc.json")
        let versionOnly = target.name != "Bridge"
        let generated = context.pluginWorkDirectoryURL.appending(path: versionOnly ? "PackageVersion.swift" : "OpenRPCDocument.swift")
        return [
            .buildCommand(
                displayName: "Embedding Protocol/openrpc.json in \(target.name)",
                executable: try context.tool(named: "embed-openrpc").url,
                arguments: [document.path(percentEncoded: false), generated.path(percentEncoded: false)]
                    + (versionOnly ? ["--version-only"] : []),
                inputFiles: [document],
                outputFiles: [generated])
        ]
    }
}
