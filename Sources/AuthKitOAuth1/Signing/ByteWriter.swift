import AuthKit

/// Appends bytes to memory the caller owns and sized beforehand.
///
/// The signer computes an upper bound for everything it writes (percent-encoding
/// at most triples a byte), takes one temporary allocation (on the stack when
/// small) and writes into it, so signing a request does not grow arrays.
struct ByteWriter {
    let start: UnsafeMutablePointer<UInt8>
    let capacity: Int
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        capacity = buffer.count
    }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        precondition(count < capacity, "ByteWriter overflow")
        start[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(count + bytes.count <= capacity, "ByteWriter overflow")
        (start + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `bytes` percent-encoded (RFC 5849 §3.6) with ``PercentEncoding``.
    @inline(__always)
    mutating func appendEncoded(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        precondition(count + bytes.count * 3 <= capacity, "ByteWriter overflow")
        count += PercentEncoding.encode(bytes, into: start + count)
    }

    /// Appends `bytes`, which are already percent-encoded, encoded once more
    /// (RFC 5849 §3.4.1.1 encodes the normalized parameters a second time).
    @inline(__always)
    mutating func appendReencoded(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        // Each `%` starts a three-byte escape and gains two bytes.
        precondition(count + Self.reencodedCapacity(bytes.count) <= capacity, "ByteWriter overflow")
        count += PercentEncoding.encode(alreadyEncoded: bytes, into: start + count)
    }

    /// Appends form-encoded `bytes` decoded and encoded again per RFC 5849 §3.6.
    @inline(__always)
    mutating func appendNormalized(formEncoded bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        precondition(count + bytes.count * 3 <= capacity, "ByteWriter overflow")
        count += PercentEncoding.reencode(formEncoded: bytes, into: start + count)
    }

    /// The most bytes encoded text of `count` bytes takes once encoded again.
    static func reencodedCapacity(_ count: Int) -> Int { count + 2 * ((count + 2) / 3) }

    mutating func appendEncoded(_ text: String) {
        var text = text
        text.withUTF8 { appendEncoded($0) }
    }

    /// Bytes `range` of what was written so far.
    func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: start + range.lowerBound, count: range.count)
    }
}
