import AuthKit

/// The request parameters that enter a signature (RFC 5849 §3.4.1.3), already
/// percent-encoded, in one byte buffer.
///
/// Every name and value is encoded once, on arrival, into `storage`; `entries`
/// point into it. Sorting then compares bytes in place, and the normalized
/// string is written straight into the base string, so signing a request
/// allocates a handful of buffers rather than a `String` per parameter.
struct EncodedParameters {
    struct Entry {
        var name: Range<Int>
        var value: Range<Int>
    }

    private(set) var storage: [UInt8] = []
    private(set) var entries: [Entry] = []

    init(capacity: Int) {
        storage.reserveCapacity(capacity)
        entries.reserveCapacity(16)
    }

    /// Adds one parameter given as raw (unencoded) bytes.
    mutating func append<Name: Sequence<UInt8>, Value: Sequence<UInt8>>(name: Name, value: Value) {
        let nameStart = storage.count
        PercentEncoding.appendEncoded(name, to: &storage)
        let valueStart = storage.count
        PercentEncoding.appendEncoded(value, to: &storage)
        entries.append(Entry(name: nameStart..<valueStart, value: valueStart..<storage.count))
    }

    /// Adds the pairs of an `application/x-www-form-urlencoded` string (a query
    /// or a body), skipping `oauth_signature`.
    ///
    /// RFC 5849 §3.4.1.3.1: the query and body are "parsed into a list of
    /// name/value pairs" per the form encoding (so `+` is a space), and §3.4.1.3.2
    /// encodes each again, so `a+b`, `a%20b` and `a b` sign alike. A malformed
    /// escape is kept as literal text, as most servers (Python's `unquote`) do.
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
                let entry = Entry(name: nameStart..<valueStart, value: valueStart..<storage.count)
                if Self.equals(storage, entry.name, Self.oauthSignature) {
                    storage.removeSubrange(nameStart...)
                } else {
                    entries.append(entry)
                }
            }
            start = end + 1
        }
    }

    /// Form-decodes `raw` and appends it encoded per RFC 5849 §3.6.
    private mutating func appendNormalized(_ raw: UnsafeBufferPointer<UInt8>) {
        guard !raw.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: raw.count) { decoded in
            if let count = PercentEncoding.decode(raw, plusAsSpace: true, into: decoded.baseAddress!) {
                PercentEncoding.appendEncoded(UnsafeBufferPointer(rebasing: decoded[..<count]), to: &storage)
            } else {
                PercentEncoding.appendEncoded(raw, to: &storage)
            }
        }
    }

    /// Sorts by encoded name, then encoded value, in ascending byte order
    /// (RFC 5849 §3.4.1.3.2); duplicates stay.
    mutating func sort() {
        var list = entries
        storage.withUnsafeBufferPointer { buffer in
            list.sort { a, b in
                let byName = Self.compare(buffer, a.name, b.name)
                return byName != 0 ? byName < 0 : Self.compare(buffer, a.value, b.value) < 0
            }
        }
        entries = list
    }

    /// Appends the encoding of the normalized string `n1=v1&n2=v2…`: the third
    /// part of the base string (RFC 5849 §3.4.1.1), encoded a second time.
    func appendNormalizedString(to output: inout [UInt8]) {
        for (index, entry) in entries.enumerated() {
            if index > 0 { output.append(contentsOf: Self.encodedAmpersand) }
            PercentEncoding.appendEncoded(storage[entry.name], to: &output)
            output.append(contentsOf: Self.encodedEquals)
            PercentEncoding.appendEncoded(storage[entry.value], to: &output)
        }
    }

    private static let oauthSignature = Array("oauth_signature".utf8)
    private static let encodedAmpersand = Array("%26".utf8)
    private static let encodedEquals = Array("%3D".utf8)

    private static func equals(_ storage: [UInt8], _ range: Range<Int>, _ other: [UInt8]) -> Bool {
        range.count == other.count && storage[range].elementsEqual(other)
    }

    private static func compare(_ buffer: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Int {
        let common = min(a.count, b.count)
        var i = 0
        while i < common {
            let x = buffer[a.lowerBound + i], y = buffer[b.lowerBound + i]
            if x != y { return x < y ? -1 : 1 }
            i += 1
        }
        return a.count - b.count
    }
}
