import AuthKit

/// The signature base string of RFC 5849 §3.4.1: the exact bytes that are signed.
///
///     METHOD & enc(base string URI) & enc(normalized parameters)
///
/// The parameters are the URL's query, the body when it is
/// `application/x-www-form-urlencoded` (§3.4.1.3.1: "the entity-body is
/// single-part", "the Content-Type header field is set to
/// application/x-www-form-urlencoded"), and the protocol parameters except
/// `oauth_signature` and `realm`; each name and value encoded (§3.6), sorted by
/// name then value, duplicates kept.
enum SignatureBaseString {
    /// Builds the base string.
    /// - Parameters:
    ///   - url: the request URL's bytes (absolute).
    ///   - body: the body's bytes, or `nil` when it is not form-encoded.
    ///   - protocolParameters: the `oauth_*` parameters, without `oauth_signature`.
    /// - Returns: `nil` when `url` is not an absolute `scheme://host…` URL.
    static func build(
        method: some Sequence<UInt8>, url: UnsafeBufferPointer<UInt8>, formBody: UnsafeBufferPointer<UInt8>?,
        protocolParameters: [(String, String)]
    ) -> [UInt8]? {
        guard let uri = BaseStringURI(url) else { return nil }
        var parameters = EncodedParameters(capacity: url.count + (formBody?.count ?? 0) + 256)
        if let query = uri.query {
            parameters.appendForm(UnsafeBufferPointer(rebasing: url[query]))
        }
        if let formBody {
            parameters.appendForm(formBody)
        }
        for (name, value) in protocolParameters {
            parameters.append(name: name.utf8, value: value.utf8)
        }
        parameters.sort()

        var output = [UInt8]()
        output.reserveCapacity(parameters.storage.count * 3 / 2 + uri.bytes.count * 2 + 16)
        for byte in method { output.append(Self.uppercased(byte)) }
        output.append(UInt8(ascii: "&"))
        PercentEncoding.appendEncoded(uri.bytes, to: &output)
        output.append(UInt8(ascii: "&"))
        parameters.appendNormalizedString(to: &output)
        return output
    }

    /// True when `contentType`'s media type is `application/x-www-form-urlencoded`,
    /// ignoring case and parameters such as `; charset=utf-8`.
    static func isFormEncoded(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let expected = "application/x-www-form-urlencoded".utf8
        var media = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = media.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { media = media.dropFirst() }
        while let last = media.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { media = media.dropLast() }
        return media.count == expected.count && zip(media, expected).allSatisfy { BaseStringURI.lowercased($0) == $1 }
    }

    @inline(__always)
    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }
}
