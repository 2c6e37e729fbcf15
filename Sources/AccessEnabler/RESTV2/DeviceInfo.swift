import Glibc
import JSON

/// The `X-Device-Info` value computed for Linux (Adobe Pass REST API V2, the X-Device-Info header): base64 of a JSON object with
/// `primaryHardwareType`, `model`, `version`, `osName`, `osVersion`, `connectionType`.
enum DeviceInfo {
    static func computed(secondScreen: Bool) -> String {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
        let release = field(name.release)
        let osVersion = release.prefix(while: { $0.isNumber || $0 == "." })
        let object: JSON = [
            "primaryHardwareType": .string(secondScreen ? "SetTopBox" : "Desktop"),
            "model": "Linux",
            "version": .string(field(name.machine)),
            "osName": "Linux",
            "osFamily": "Linux",
            "osVersion": .string(osVersion.isEmpty ? "0" : String(osVersion)),
            "connectionType": "LAN",
        ]
        return Base64.encode(object.serialized())
    }

    /// `AP-Device-Identifier` value for a device id.
    static func deviceIdentifierHeader(_ deviceID: String) -> String {
        "fingerprint " + Base64.encode(deviceID.utf8)
    }
}
