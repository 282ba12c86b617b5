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
///
/// Everything is written into one temporary allocation sized up front.
enum SignatureBaseString {
    /// Builds the base string and passes it, with the encoded and sorted
    /// parameters, to `body`. Both are valid only during the call.
    /// - Parameters:
    ///   - url: the request URL's bytes (absolute).
    ///   - formBody: the body's bytes, or `nil` when it is not form-encoded.
    ///   - protocolParameters: the `oauth_*` parameters; `oauth_signature` and `realm` are skipped.
    /// - Returns: `nil` when `url` is not an absolute `scheme://host…` URL.
    static func withBaseString<Result>(
        method: String, url: UnsafeBufferPointer<UInt8>, formBody: UnsafeBufferPointer<UInt8>?,
        protocolParameters: [(String, String)],
        _ body: (_ baseString: UnsafeBufferPointer<UInt8>, _ parameters: EncodedParameters) throws -> Result
    ) rethrows -> Result? {
        var storageBytes = 0
        for (name, value) in protocolParameters { storageBytes += (name.utf8.count + value.utf8.count) * 3 }
        return try withBaseString(
            method: method, url: url, formBody: formBody, protocolBytes: storageBytes,
            protocolCount: protocolParameters.count,
            appendProtocol: { parameters in
                for (name, value) in protocolParameters where name != "oauth_signature" && name != "realm" {
                    parameters.appendProtocol(name: name, value: value)
                }
            }, body)
    }

    /// The same, with the protocol parameters added by `appendProtocol`, which
    /// adds at most `protocolCount` parameters taking at most `protocolBytes`
    /// bytes once encoded. The signer uses it to add precomputed parameters
    /// without encoding them again.
    ///
    /// The buffers are sized tightly because `withUnsafeTemporaryAllocation`
    /// uses the stack only up to 1 KiB: a typical request fits.
    static func withBaseString<Result>(
        method: String, url: UnsafeBufferPointer<UInt8>, formBody: UnsafeBufferPointer<UInt8>?,
        protocolBytes: Int, protocolCount: Int, appendProtocol: (inout EncodedParameters) -> Void,
        _ body: (_ baseString: UnsafeBufferPointer<UInt8>, _ parameters: EncodedParameters) throws -> Result
    ) rethrows -> Result? {
        guard let uri = BaseStringURI(url) else { return nil }
        let query = uri.query.map { UnsafeBufferPointer(rebasing: url[$0]) }
        let pairCapacity =
            EncodedParameters.pairCapacity(query?.count ?? 0)
            + EncodedParameters.pairCapacity(formBody?.count ?? 0) + protocolCount
        let storageCapacity =
            EncodedParameters.storageCapacity(rawBytes: (query?.count ?? 0) + (formBody?.count ?? 0))
            + protocolBytes

        return try withUnsafeTemporaryAllocation(of: EncodedParameters.Entry.self, capacity: max(pairCapacity, 1)) {
            entries in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(storageCapacity, 1)) { storage in
                var parameters = EncodedParameters(storage: storage, entries: entries)
                if let query { parameters.appendForm(query) }
                if let formBody { parameters.appendForm(formBody) }
                appendProtocol(&parameters)
                parameters.sort()

                // Sized from what was actually stored, not from the worst case.
                let baseCapacity =
                    method.utf8.count * 3 + 2 + BaseStringURI.encodedCapacity(urlCount: uri.baseLength)
                    + parameters.normalizedStringCapacity
                return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: baseCapacity) { bytes in
                    var output = ByteWriter(bytes)
                    // §3.4.1.1: uppercase, and "if the request uses a custom
                    // HTTP method, it MUST be encoded" (§3.6): a method token
                    // may hold `&` or `+`, which would split or change the
                    // base string.
                    for byte in method.utf8 {
                        var upper = uppercased(byte)
                        if PercentEncoding.isUnreserved(upper) {
                            output.append(upper)
                        } else {
                            withUnsafePointer(to: &upper) {
                                output.appendEncoded(UnsafeBufferPointer(start: $0, count: 1))
                            }
                        }
                    }
                    output.append(UInt8(ascii: "&"))
                    uri.appendEncoded(from: url, to: &output)
                    output.append(UInt8(ascii: "&"))
                    parameters.appendNormalizedString(to: &output)
                    return try body(output.written, parameters)
                }
            }
        }
    }

    @inline(__always)
    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }
}
