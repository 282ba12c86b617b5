import AuthKit

/// The base string URI of RFC 5849 §3.4.1.2, located in an absolute URL's bytes.
///
/// "The scheme and host MUST be in lowercase", "the port MUST be included if it
/// is not the default port for the scheme, and MUST be excluded if it is", and
/// the query and fragment are left out (the query's parameters are signed
/// separately, §3.4.1.3.1). User info is not part of it either: the RFC builds
/// the URI from the `Host` header, which carries none.
///
/// It only records ranges; ``appendEncoded(from:to:)`` writes the URI.
struct BaseStringURI {
    private var scheme: Range<Int>
    private var host: Range<Int>
    /// `nil` when absent or the scheme's default.
    private var port: Range<Int>?
    /// Empty for an empty path, which is written as `/` (RFC 3986 §6.2.3).
    private var path: Range<Int>
    /// Where the query (after `?`, before `#`) lies in the URL, if there is one.
    var query: Range<Int>?

    /// Parses `url`; `nil` when it is not an absolute `scheme://authority…` URL.
    init?(_ url: UnsafeBufferPointer<UInt8>) {
        let count = url.count
        var colon = 0
        while colon < count, url[colon] != UInt8(ascii: ":") {
            guard Self.isSchemeCharacter(url[colon]) else { return nil }
            colon += 1
        }
        guard colon > 0, colon + 2 < count, url[colon + 1] == UInt8(ascii: "/"), url[colon + 2] == UInt8(ascii: "/")
        else {
            return nil
        }
        let authorityStart = colon + 3
        var authorityEnd = authorityStart
        while authorityEnd < count, !Self.endsAuthority(url[authorityEnd]) { authorityEnd += 1 }

        var hostStart = authorityStart
        for index in authorityStart..<authorityEnd where url[index] == UInt8(ascii: "@") { hostStart = index + 1 }
        var hostEnd = authorityEnd
        var portStart: Int?
        var index = hostStart
        if index < authorityEnd, url[index] == UInt8(ascii: "[") {
            while index < authorityEnd, url[index] != UInt8(ascii: "]") { index += 1 }
        }
        while index < authorityEnd {
            if url[index] == UInt8(ascii: ":") {
                hostEnd = index
                portStart = index + 1
                break
            }
            index += 1
        }
        guard hostEnd > hostStart else { return nil }

        var pathEnd = authorityEnd
        while pathEnd < count, url[pathEnd] != UInt8(ascii: "?"), url[pathEnd] != UInt8(ascii: "#") { pathEnd += 1 }
        if pathEnd < count, url[pathEnd] == UInt8(ascii: "?") {
            var queryEnd = pathEnd + 1
            while queryEnd < count, url[queryEnd] != UInt8(ascii: "#") { queryEnd += 1 }
            query = (pathEnd + 1)..<queryEnd
        } else {
            query = nil
        }

        scheme = 0..<colon
        host = hostStart..<hostEnd
        path = authorityEnd..<pathEnd
        port = nil
        if var portStart, portStart < authorityEnd {
            // A port's leading zeros are not part of its number: the request
            // goes out with `Host: h:8790` for `:08790` (and `:0443` is the
            // default port), and the server signs what it received.
            while portStart < authorityEnd - 1, url[portStart] == UInt8(ascii: "0") { portStart += 1 }
            let digits = UnsafeBufferPointer(rebasing: url[portStart..<authorityEnd])
            let schemeBytes = UnsafeBufferPointer(rebasing: url[scheme])
            let isDefault =
                (Self.equalsLowercased(schemeBytes, "http") && Self.equals(digits, "80"))
                || (Self.equalsLowercased(schemeBytes, "https") && Self.equals(digits, "443"))
            if !isDefault { port = portStart..<authorityEnd }
        }
    }

    /// The bytes of the URL that make up the base URI (before encoding).
    var baseLength: Int { scheme.count + host.count + (port?.count ?? 0) + path.count + 1 }

    /// The most bytes ``appendEncoded(from:to:)`` writes for a URL of `count` bytes.
    static func encodedCapacity(urlCount: Int) -> Int { urlCount * 3 + 12 }

    /// Writes `enc(base string URI)` for `url`, the buffer this was parsed from.
    func appendEncoded(from url: UnsafeBufferPointer<UInt8>, to output: inout ByteWriter) {
        appendLowercasedEncoded(UnsafeBufferPointer(rebasing: url[scheme]), to: &output)
        output.append("%3A%2F%2F") // "://"
        appendLowercasedEncoded(UnsafeBufferPointer(rebasing: url[host]), to: &output)
        if let port {
            output.append("%3A")
            output.appendEncoded(UnsafeBufferPointer(rebasing: url[port]))
        }
        if path.isEmpty {
            output.append("%2F")
        } else {
            output.appendEncoded(UnsafeBufferPointer(rebasing: url[path]))
        }
    }

    private func appendLowercasedEncoded(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout ByteWriter) {
        guard !bytes.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { lower in
            for (index, byte) in bytes.enumerated() { lower[index] = Self.lowercased(byte) }
            output.appendEncoded(UnsafeBufferPointer(lower))
        }
    }

    private static func isSchemeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && bytes.indices.allSatisfy { bytes[$0] == text.utf8Start[$0] }
    }

    private static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount
            && bytes.indices.allSatisfy { lowercased(bytes[$0]) == text.utf8Start[$0] }
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
