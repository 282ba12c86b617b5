/// A return address after sign-in, allowed only as a path on this site:
/// `/`, `/settings?tab=2`. Not `//evil.example` (a scheme-relative URL),
/// `/\evil.example` (which browsers read as `//`), `https://…`, nor anything
/// with a control character, space or backslash (RFC 9700 §4.11: no open
/// redirector).
enum ReturnPath {
    static func checked(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return "/" }
        guard text.utf8.count <= 1024, text.hasPrefix("/"), !text.hasPrefix("//"),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "\\" })
        else { return nil }
        return text
    }
}
