/// Bytes as a string, or `nil` when they are not valid UTF-8.
///
/// The standard library's `String(validating:as:)` does this from macOS 15
/// and iOS 18 only, and AuthKit supports macOS 13 and iOS 16. Decoding
/// repairs an invalid sequence with U+FFFD, so the bytes are valid exactly
/// when the decoded text encodes back to them.
package enum ValidUTF8 {
    @inlinable
    package static func string<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        if bytes.allSatisfy({ $0 < 0x80 }) { return text } // ASCII: nothing to repair
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
