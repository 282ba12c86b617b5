#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Strict percent-encoding of UTF-8 text.
///
/// Every byte outside the RFC 3986 §2.3 *unreserved* set (`A-Z a-z 0-9 - . _ ~`)
/// becomes `%XX` with uppercase hex. This is exactly the encoding RFC 5849 §3.6
/// demands for OAuth 1.0a signatures, and it is also the safest encoding for
/// OAuth 2.0 query and form values: every `application/x-www-form-urlencoded`
/// decoder reads it back unchanged, whereas `URLComponents` leaves `+`, `&`-free
/// sub-delimiters and `=` raw in ways that servers decode differently
/// (a raw `+` is read as a space).
package enum PercentEncoding {
    /// Percent-encodes `string`'s UTF-8 bytes, keeping only unreserved characters.
    ///
    ///     PercentEncoding.encode("Ladies + Gentlemen") == "Ladies%20%2B%20Gentlemen"
    package static func encode(_ string: String) -> String {
        var string = string
        return string.withUTF8 { input in
            if input.isEmpty { return "" }
            return String(unsafeUninitializedCapacity: input.count * 3) { output in
                encode(input, into: output.baseAddress!)
            }
        }
    }

    /// The encoder itself, on raw memory: writes the encoding of `input` to
    /// `output` and returns the number of bytes written. `output` must have room
    /// for `3 * input.count` bytes (every byte may become `%XX`).
    ///
    /// The other entry points wrap this one; the OAuth 1.0a signer calls it
    /// directly because it runs on every signed request.
    @inlinable
    package static func encode(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int {
        var written = 0
        for byte in input {
            if isUnreserved(byte) {
                output[written] = byte
                written &+= 1
            } else {
                output[written] = UInt8(ascii: "%")
                output[written &+ 1] = hexDigit(byte >> 4)
                output[written &+ 2] = hexDigit(byte & 0x0F)
                written &+= 3
            }
        }
        return written
    }

    /// ``encode(_:into:)`` for input that is itself the output of this encoder
    /// (unreserved characters and `%XX` only), as when RFC 5849 §3.4.1.1 encodes
    /// the already-encoded normalized parameters a second time: the only byte
    /// that changes is `%`, to `%25`, so no byte needs the unreserved test.
    /// `output` must have room for `3 * input.count` bytes.
    @inlinable
    package static func encode(
        alreadyEncoded input: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutablePointer<UInt8>
    ) -> Int {
        guard let source = input.baseAddress else { return 0 }
        // Runs between `%`s are copied whole: the C library finds and moves
        // them many bytes at a time.
        var written = 0
        var index = 0
        let count = input.count
        while index < count {
            let rest = count &- index
            let found = memchr(source + index, Int32(UInt8(ascii: "%")), rest)
            let run = found.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - (source + index) } ?? rest
            (output + written).update(from: source + index, count: run)
            written &+= run
            index &+= run
            guard index < count else { break }
            output[written] = UInt8(ascii: "%")
            output[written &+ 1] = UInt8(ascii: "2")
            output[written &+ 2] = UInt8(ascii: "5")
            written &+= 3
            index &+= 1
        }
        return written
    }

    /// Decodes form-encoded `input` (as ``decode(_:plusAsSpace:)`` with
    /// `plusAsSpace`) and encodes the result (as ``encode(_:into:)``) in one
    /// pass, without the intermediate bytes: `a+b%2c~` becomes `a%20b%2C~`.
    /// RFC 5849 §3.4.1.3 does this to every query and body parameter. A
    /// malformed escape is kept as literal text (its `%` is encoded), as
    /// Python's `unquote` and most servers read it. `output` must have room for
    /// `3 * input.count` bytes.
    @inlinable
    package static func reencode(
        formEncoded input: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutablePointer<UInt8>
    ) -> Int {
        guard let source = input.baseAddress else { return 0 }
        var written = 0
        var index = 0
        let count = input.count
        while index < count {
            var byte = source[index]
            index &+= 1
            if byte == UInt8(ascii: "%"), index &+ 1 < count,
                let high = hexValue(source[index]), let low = hexValue(source[index &+ 1])
            {
                byte = high << 4 | low
                index &+= 2
            } else if byte == UInt8(ascii: "+") {
                byte = UInt8(ascii: " ")
            }
            if isUnreserved(byte) {
                output[written] = byte
                written &+= 1
            } else {
                output[written] = UInt8(ascii: "%")
                output[written &+ 1] = hexDigit(byte >> 4)
                output[written &+ 2] = hexDigit(byte & 0x0F)
                written &+= 3
            }
        }
        return written
    }

    /// Appends the encoding of `bytes` to `output`: ``encode(_:)`` for callers
    /// that build a larger buffer, without an intermediate `String`.
    @inlinable
    package static func appendEncoded<Bytes: Sequence<UInt8>>(_ bytes: Bytes, to output: inout [UInt8]) {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { input in
            appendEncoded(buffer: input, to: &output)
        }
        if contiguous == nil {
            let copy = Array(bytes)
            copy.withUnsafeBufferPointer { appendEncoded(buffer: $0, to: &output) }
        }
    }

    @inlinable
    static func appendEncoded(buffer input: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        guard !input.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: input.count * 3) { scratch in
            let written = encode(input, into: scratch.baseAddress!)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<written]))
        }
    }

    /// The decoder on raw memory: writes the decoding of `input` to `output`
    /// (room for `input.count` bytes) and returns the number of bytes written,
    /// or `nil` at a malformed escape. Bytes need not be UTF-8.
    @inlinable
    package static func decode(
        _ input: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool,
        into output: UnsafeMutablePointer<UInt8>
    ) -> Int? {
        var written = 0
        var index = 0
        let count = input.count
        while index < count {
            let byte = input[index]
            index += 1
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 1 < count, let high = hexValue(input[index]), let low = hexValue(input[index + 1]) else {
                    return nil
                }
                index += 2
                output[written] = high << 4 | low
            case UInt8(ascii: "+") where plusAsSpace:
                output[written] = UInt8(ascii: " ")
            default:
                output[written] = byte
            }
            written += 1
        }
        return written
    }

    /// Decodes `%XX` escapes. With `plusAsSpace` (form encoding, WHATWG URL
    /// standard §5.1) a literal `+` is read as a space first.
    ///
    /// Returns `nil` when an escape is malformed or the bytes are not UTF-8, so a
    /// caller can report the offending parameter rather than guess.
    package static func decode(_ string: String, plusAsSpace: Bool = false) -> String? {
        var string = string
        let bytes: [UInt8]? = string.withUTF8 { input in
            if input.isEmpty { return [] }
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: input.count) { output, count in
                guard let written = decode(input, plusAsSpace: plusAsSpace, into: output.baseAddress!) else {
                    failed = true
                    count = 0
                    return
                }
                count = written
            }
            return failed ? nil : bytes
        }
        guard let bytes else { return nil }
        return ValidUTF8.string(bytes)
    }

    /// The first run of `%XX` escapes in `text` whose bytes are not UTF-8
    /// (`%FF`, a `%C3` with nothing after it), as written; `nil` when every
    /// escape decodes to UTF-8. A malformed escape (`%ZZ`) is not this
    /// question: ``decode(_:plusAsSpace:)`` returns `nil` for both, and this
    /// tells the two apart for a message.
    ///
    /// RFC 5849 §3.6 percent-encodes UTF-8 text; for other bytes decoders
    /// disagree (AuthKit's OAuth 1.0a signer signs the byte, as Go's
    /// `url.ParseQuery` keeps it; Python's `unquote`, and so oauthlib, reads
    /// U+FFFD), so a signature over them holds at one server and fails at
    /// another.
    package static func escapeNotUTF8(in text: String) -> String? {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            let start = index
            var run = [UInt8]()
            while index + 2 < bytes.count, bytes[index] == UInt8(ascii: "%"),
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                run.append(high << 4 | low)
                index += 3
            }
            if run.isEmpty {
                index += 1
            } else if ValidUTF8.string(run) == nil {
                return String(decoding: bytes[start..<index], as: UTF8.self)
            }
        }
        return nil
    }

    /// RFC 3986 §2.3 *unreserved*: `A-Z a-z 0-9 - . _ ~`.
    ///
    /// A table lookup rather than a chain of range tests: it runs for every
    /// byte of every signed OAuth 1.0a request.
    @inlinable @inline(__always)
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        unreservedTable.utf8Start[Int(byte)] == UInt8(ascii: "1")
    }

    /// Character n is `1` when byte n is unreserved (64 bytes a line): `-` (45),
    /// `.` (46), `0`–`9` (48–57), `A`–`Z` (65–90), `_` (95), `a`–`z` (97–122),
    /// `~` (126). A literal is constant memory that needs no lazy set-up, and
    /// one load per byte replaced a bitmap's chain of comparisons (together
    /// with the unchecked arithmetic in ``encode(_:into:)``, about 2.6% of a
    /// signature, measured).
    @usableFromInline
    static var unreservedTable: StaticString {
        """
        0000000000000000000000000000000000000000000001101111111111000000\
        0111111111111111111111111110000101111111111111111111111111100010\
        0000000000000000000000000000000000000000000000000000000000000000\
        0000000000000000000000000000000000000000000000000000000000000000
        """
    }

    /// Uppercase hex, as RFC 5849 §3.6 requires.
    @inlinable @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble + UInt8(ascii: "0") : nibble - 10 + UInt8(ascii: "A")
    }

    @inlinable @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
