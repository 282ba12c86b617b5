/// A return address after sign-in, allowed only as a path on this site:
/// `/`, `/settings?tab=2`. Not `//evil.example` (a scheme-relative URL),
/// `/\evil.example` (which browsers read as `//`), `https://…`, nor anything
/// with a control character, space or backslash (RFC 9700 §4.11: no open
/// redirector).
///
/// Nor a path with `.` or `..` segments (`%2e` too, as browsers read it) or
/// an empty one (`//` inside it): `/.//evil.example` is a path on this site,
/// but a proxy that merges slashes or folds dot segments, or a page that
/// redirects to its own path, makes it `//evil.example`; and under a public
/// URL with a path (`/app`), `/../other` left the app's prefix. For the
/// same proxies, no `%2F` or `%5C` in the path (an escaped `/` or `\`):
/// `/%2F%2Fevil.example`, decoded once by a proxy, is `///evil.example`.
enum ReturnPath {
    static func checked(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return "/" }
        guard text.utf8.count <= 1024, text.hasPrefix("/"), !text.hasPrefix("//"),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "\\" })
        else { return nil }
        let path = text.prefix { $0 != "?" && $0 != "#" }
        let lowered = path.lowercased()
        if lowered.contains("%2f") || lowered.contains("%5c") { return nil }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let spelled = segment.lowercased().replacing("%2e", with: ".")
            if spelled == "." || spelled == ".." { return nil }
        }
        if path.dropFirst().contains("//") { return nil }
        return text
    }
}
