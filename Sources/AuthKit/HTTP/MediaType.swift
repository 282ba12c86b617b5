/// The media type of a `Content-Type` value, without parameters, lowercased:
/// `application/json` for `Application/JSON; charset=utf-8` (RFC 9110 §8.3.1).
package func mediaType(ofContentType value: String) -> String {
    // Most values say plainly `application/json`: nothing to cut or fold.
    if value.allUTF8({
        $0 > 0x20 && $0 != UInt8(ascii: ";") && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
    }) {
        return value
    }
    let type =
        value.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false).first
        ?? Substring(value).utf8[...]
    return Substring(type).trimmingOptionalWhitespace().lowercased()
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs: HTTP's optional
    /// whitespace (RFC 9110 §5.6.3). Cheaper than Foundation's
    /// `trimmingCharacters(in:)`, which builds a character set per call.
    package func trimmingOptionalWhitespace() -> SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
