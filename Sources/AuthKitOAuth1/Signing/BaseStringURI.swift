import AuthKit

/// The base string URI of RFC 5849 §3.4.1.2, read from an absolute URL's bytes.
///
/// "The scheme and host MUST be in lowercase", "the port MUST be included if it
/// is not the default port for the scheme, and MUST be excluded if it is", and
/// the query and fragment are left out (the query's parameters are signed
/// separately, §3.4.1.3.1). User info is not part of it either: the RFC builds
/// the URI from the `Host` header, which carries none.
struct BaseStringURI {
    /// `scheme://host[:port]/path`, as bytes, not yet encoded.
    var bytes: [UInt8]
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
        guard colon > 0, colon + 2 < count, url[colon + 1] == UInt8(ascii: "/"), url[colon + 2] == UInt8(ascii: "/") else {
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

        var bytes = [UInt8]()
        bytes.reserveCapacity(pathEnd - hostStart + colon + 4)
        for byte in url[0..<colon] { bytes.append(Self.lowercased(byte)) }
        bytes.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "/")])
        for byte in url[hostStart..<hostEnd] { bytes.append(Self.lowercased(byte)) }
        if let portStart, portStart < authorityEnd {
            let port = url[portStart..<authorityEnd]
            let scheme = bytes[0..<colon]
            let isDefault = (scheme.elementsEqual("http".utf8) && port.elementsEqual("80".utf8))
                || (scheme.elementsEqual("https".utf8) && port.elementsEqual("443".utf8))
            if !isDefault {
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: port)
            }
        }
        if pathEnd > authorityEnd {
            bytes.append(contentsOf: url[authorityEnd..<pathEnd])
        } else {
            bytes.append(UInt8(ascii: "/")) // an empty path is "/" (RFC 3986 §6.2.3)
        }
        self.bytes = bytes
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

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
