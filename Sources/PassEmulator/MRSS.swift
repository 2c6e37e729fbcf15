import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The MRSS check on decision resources: a resource that starts with `<` (after white space) is an MRSS document
/// and must be well-formed XML, else Adobe answers 400 `invalid_parameter_resources` (the SDK's Z130, "malformed
/// MRSS"). libxml2 judges, through Foundation's `XMLParser`; external entities are never loaded.
enum MRSS {
    /// Whether `resource` looks like MRSS (its first non-blank character is `<`) but is not well-formed XML.
    static func isMalformed(_ resource: String) -> Bool {
        let trimmed = resource.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("<") else { return false }
        let parser = XMLParser(data: Data(trimmed.utf8))
        parser.shouldResolveExternalEntities = false
        let shape = ElementShape()
        parser.delegate = shape
        let finished = parser.parse()
        // Foundation's parser feeds libxml2 without a final chunk: `parse()` can return true after an error, and a
        // document cut short reports nothing. So also require one root element, closed.
        return !finished || parser.parserError != nil || shape.roots != 1 || shape.depth != 0
    }

    /// Counts root elements and the depth left open.
    private final class ElementShape: NSObject, XMLParserDelegate {
        var depth = 0
        var roots = 0

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if depth == 0 { roots += 1 }
            depth += 1
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
        }
    }
}
