import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The request parameters that enter a signature (RFC 5849 §3.4.1.3), already
/// percent-encoded, in one caller-provided buffer.
///
/// Every name and value is encoded once, on arrival; `entries` point into the
/// buffer. Sorting compares bytes in place, the normalized string is written
/// straight into the base string, and the protocol parameters' encoded bytes
/// are reused for the `Authorization` header.
struct EncodedParameters {
    struct Entry {
        var name: Range<Int>
        var value: Range<Int>
        /// An `oauth_*` protocol parameter (goes into the header), not a query or body one.
        var isProtocol: Bool
    }

    private(set) var storage: ByteWriter
    private let entryBuffer: UnsafeMutableBufferPointer<Entry>
    private(set) var count = 0
    /// Whether the query or body held an `oauth_signature`: never signed
    /// (§3.4.1.3.1), but a header signature beside it is a second one.
    private(set) var requestHasSignature = false

    init(storage: UnsafeMutableBufferPointer<UInt8>, entries: UnsafeMutableBufferPointer<Entry>) {
        self.storage = ByteWriter(storage)
        self.entryBuffer = entries
    }

    var entries: UnsafeMutableBufferPointer<Entry> { UnsafeMutableBufferPointer(rebasing: entryBuffer[..<count]) }

    func bytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { storage.slice(range) }

    /// Bytes of storage needed for `rawBytes` bytes of names and values.
    static func storageCapacity(rawBytes: Int) -> Int { rawBytes * 3 }

    /// An upper bound on the pairs in a form-encoded string of `count` bytes:
    /// each non-empty pair takes at least one byte and a separating `&`.
    static func pairCapacity(_ count: Int) -> Int { count == 0 ? 0 : (count + 1) / 2 }

    /// Adds a protocol parameter given as raw (unencoded) text.
    mutating func appendProtocol(name: String, value: String) {
        let nameStart = storage.count
        storage.appendEncoded(name)
        let valueStart = storage.count
        storage.appendEncoded(value)
        add(Entry(name: nameStart..<valueStart, value: valueStart..<storage.count, isProtocol: true))
    }

    /// Adds a protocol parameter whose name and value need no encoding
    /// (precomputed by the signer: `oauth_consumer_key`, `HMAC-SHA1`, `1.0`).
    mutating func appendProtocol(name: StaticString, encodedValue: UnsafeBufferPointer<UInt8>) {
        let nameStart = storage.count
        storage.append(name)
        let valueStart = storage.count
        storage.append(encodedValue)
        add(Entry(name: nameStart..<valueStart, value: valueStart..<storage.count, isProtocol: true))
    }

    mutating func appendProtocol(name: StaticString, encodedValue: StaticString) {
        appendProtocol(
            name: name,
            encodedValue: UnsafeBufferPointer(start: encodedValue.utf8Start, count: encodedValue.utf8CodeUnitCount))
    }

    /// Adds a protocol parameter with a constant name and a raw value.
    mutating func appendProtocol(name: StaticString, value: String) {
        let nameStart = storage.count
        storage.append(name)
        let valueStart = storage.count
        storage.appendEncoded(value)
        add(Entry(name: nameStart..<valueStart, value: valueStart..<storage.count, isProtocol: true))
    }

    /// Adds the pairs of an `application/x-www-form-urlencoded` string (a query
    /// or a body), skipping `oauth_signature`.
    ///
    /// RFC 5849 §3.4.1.3.1: the query and body are "parsed into a list of
    /// name/value pairs" per the form encoding (so `+` is a space), and §3.4.1.3.2
    /// encodes each again, so `a+b`, `a%20b` and `a b` sign alike. A malformed
    /// escape is kept as literal text, as most servers (Python's `unquote`) do.
    /// An escape of bytes that are not UTF-8 is signed as those bytes (Python
    /// reads U+FFFD there; see ``OAuth1Signer``).
    mutating func appendForm(_ text: UnsafeBufferPointer<UInt8>) {
        var start = 0
        while start <= text.count {
            var end = start
            while end < text.count, text[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end, text[equals] != UInt8(ascii: "=") { equals += 1 }
                let nameStart = storage.count
                appendNormalized(UnsafeBufferPointer(rebasing: text[start..<equals]))
                let valueStart = storage.count
                appendNormalized(UnsafeBufferPointer(rebasing: text[min(equals + 1, end)..<end]))
                let entry = Entry(name: nameStart..<valueStart, value: valueStart..<storage.count, isProtocol: false)
                if Self.equal(storage.slice(entry.name), Self.oauthSignature) {
                    requestHasSignature = true
                } else {
                    add(entry)
                }
            }
            start = end + 1
        }
    }

    /// The first name given both as a protocol parameter and in the query
    /// or form body, as it was encoded. RFC 5849 §3.5: each protocol
    /// parameter goes in one place; one the header carries given in the
    /// request too is signed twice and sent twice, which servers refuse
    /// ("duplicate OAuth1 entries"). Only `oauth_` names are compared, so
    /// a request without any costs one prefix test a pair.
    func protocolNameAlsoInRequest() -> String? {
        if requestHasSignature { return "oauth_signature" }
        let prefix: StaticString = "oauth_"
        for entry in entries where !entry.isProtocol {
            let name = storage.slice(entry.name)
            guard name.count > prefix.utf8CodeUnitCount,
                memcmp(name.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
            else { continue }
            for other in entries where other.isProtocol && storage.slice(other.name).elementsEqual(name) {
                return String(decoding: name, as: UTF8.self)
            }
        }
        return nil
    }

    private mutating func add(_ entry: Entry) {
        precondition(count < entryBuffer.count, "EncodedParameters overflow")
        entryBuffer[count] = entry
        count += 1
    }

    /// Form-decodes `raw` and appends it encoded per RFC 5849 §3.6.
    private mutating func appendNormalized(_ raw: UnsafeBufferPointer<UInt8>) {
        storage.appendNormalized(formEncoded: raw)
    }

    /// Sorts by encoded name, then encoded value, in ascending byte order
    /// (RFC 5849 §3.4.1.3.2); duplicates stay.
    mutating func sort() {
        let base = UnsafeBufferPointer(start: storage.start, count: storage.count)
        var list = entries
        list.sort { a, b in
            let byName = Self.compare(base, a.name, b.name)
            return byName != 0 ? byName < 0 : Self.compare(base, a.value, b.value) < 0
        }
    }

    /// Appends the encoding of the normalized string `n1=v1&n2=v2…`: the third
    /// part of the base string (RFC 5849 §3.4.1.1), encoded a second time.
    func appendNormalizedString(to output: inout ByteWriter) {
        for (index, entry) in entries.enumerated() {
            if index > 0 { output.append("%26") }
            output.appendReencoded(bytes(entry.name))
            output.append("%3D")
            output.appendReencoded(bytes(entry.value))
        }
    }

    /// The most bytes ``appendNormalizedString(to:)`` writes.
    /// (Each `%` of the stored text starts a three-byte escape and grows by
    /// two; each name and value is bounded separately, plus `%3D` and `%26`.)
    var normalizedStringCapacity: Int { ByteWriter.reencodedCapacity(storage.count) + count * (4 + 6) }

    private static let oauthSignature: StaticString = "oauth_signature"

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0
    }

    private static func compare(_ base: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(base.baseAddress! + a.lowerBound, base.baseAddress! + b.lowerBound, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
