#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Darwin)
    import Darwin
#else
    import CAuthKitLinux
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
#endif

/// Cryptographically secure random bytes from the operating system's CSPRNG.
///
/// `state` and PKCE verifiers must be unguessable (RFC 6749 §10.10, RFC 7636
/// §7.1). The bytes come from the kernel — `getrandom(2)` on Linux,
/// `arc4random_buf(3)` on Apple platforms — the same source swift-crypto's
/// `SymmetricKey(size:)` draws from, but that one asks for 8 bytes per system
/// call (four calls for a 32-byte state). Nothing is derived or mixed here:
/// the bytes are the kernel's, drawn 4 KiB at a time into a pool
/// (``fillFromPool(_:)``) for the short values (``token()``), directly for
/// anything longer than a kilobyte.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` from the kernel's CSPRNG.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard var next = buffer.baseAddress else { return }
        var remaining = buffer.count
        #if canImport(Darwin)
            arc4random_buf(next, remaining)
        #else
            while remaining > 0 {
                // getrandom(2) returns at most 32 MiB per call and may be
                // interrupted by a signal before filling anything (EINTR).
                let got = authkit_getrandom(next, remaining)
                if got < 0 {
                    if errno == EINTR { continue }
                    fatalError("getrandom(2) failed (errno \(errno)): no secure randomness on this system")
                }
                next += got
                remaining -= got
            }
        #endif
    }

    /// Fills `buffer` from a pool the kernel refills 4 KiB at a time: one
    /// system call per 256 OAuth 1.0a nonces instead of one per nonce. The
    /// bytes are the kernel's CSPRNG output all the same (arc4random and
    /// OpenSSL's RAND_bytes buffer likewise); a forked child empties the pool
    /// first, so parent and child never hand out the same bytes.
    package static func fillFromPool(_ buffer: UnsafeMutableRawBufferPointer) {
        RandomPool.shared.fill(buffer)
    }

    /// 32 random bytes as base64url without padding: 43 characters, 256 bits.
    ///
    /// From the pool: a code exchange draws two (its `state` and its PKCE
    /// verifier), and each was a `getrandom` call of its own, a seventieth
    /// of the client's CPU at 16 exchanges at once (docs/performance.md).
    package static func token() -> String {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { buffer in
            fillFromPool(buffer)
            return Base64URL.encode(UnsafeRawBufferPointer(buffer))
        }
    }
}

/// Base64url without padding (RFC 4648 §5), as RFC 7636 §3 specifies for PKCE.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        return input.withUnsafeBytes { encode($0) }
    }

    /// The bytes of unpadded base64url text (RFC 7515 §2, as JWS parts are
    /// written); `nil` for any character outside the alphabet, padding
    /// included, or a length no encoding has.
    package static func decode(_ text: Substring) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var bits: UInt32 = 0
            for value in chunk { bits = bits << 6 | UInt32(value) }
            bits <<= UInt32(6 * (4 - chunk.count))
            let produced = chunk.count - 1
            for shift in [16, 8, 0].prefix(produced) { output.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift))) }
            index += 4
        }
        return output
    }

    /// The encoder on raw bytes: 3 bytes become 4 characters; a final 1 or 2
    /// bytes become 2 or 3 characters, with no `=` padding.
    package static func encode(_ input: UnsafeRawBufferPointer) -> String {
        let count = input.count
        let length = count / 3 * 4 + [0, 2, 3][count % 3]
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { output in
            alphabet.withUnsafeBufferPointer { table in
                var read = 0
                var written = 0
                while read + 3 <= count {
                    let chunk = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8 | UInt32(input[read + 2])
                    output[written] = table[Int(chunk >> 18)]
                    output[written + 1] = table[Int(chunk >> 12 & 0x3F)]
                    output[written + 2] = table[Int(chunk >> 6 & 0x3F)]
                    output[written + 3] = table[Int(chunk & 0x3F)]
                    read += 3
                    written += 4
                }
                if read < count {
                    let second = read + 1 < count ? UInt32(input[read + 1]) : 0
                    let chunk = UInt32(input[read]) << 16 | second << 8
                    output[written] = table[Int(chunk >> 18)]
                    output[written + 1] = table[Int(chunk >> 12 & 0x3F)]
                    written += 2
                    if read + 1 < count {
                        output[written] = table[Int(chunk >> 6 & 0x3F)]
                        written += 1
                    }
                }
                return written
            }
        }
    }
}

/// The buffer behind ``SecureRandom/fillFromPool(_:)``.
private final class RandomPool: @unchecked Sendable {
    static let shared: RandomPool = {
        let pool = RandomPool()
        // A child process starts with an empty pool (see fillFromPool). The
        // lock is held across fork(2) so the child never inherits it locked
        // by a thread that does not exist there.
        pthread_atfork(
            { RandomPool.shared.lock.lock() },
            { RandomPool.shared.lock.unlock() },
            { RandomPool.shared.forgetAfterFork() })
        return pool
    }()

    let lock = ThreadLock()
    private var bytes = [UInt8](repeating: 0, count: 4096)
    /// How many bytes at the end of `bytes` are still unused.
    private var available = 0

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count <= bytes.count / 4 else { return SecureRandom.fill(buffer) }
        lock.lock()
        defer { lock.unlock() }
        if available < buffer.count {
            bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
            available = bytes.count
        }
        let start = bytes.count - available
        bytes.withUnsafeMutableBytes { pool in
            let taken = UnsafeMutableRawBufferPointer(rebasing: pool[start..<start + buffer.count])
            buffer.copyMemory(from: UnsafeRawBufferPointer(taken))
            // Handed-out bytes do not stay in memory.
            taken.initializeMemory(as: UInt8.self, repeating: 0)
        }
        available -= buffer.count
    }

    /// After fork(2), in the child (the lock taken before the fork is
    /// still held): the pool's bytes belong to the parent.
    func forgetAfterFork() {
        available = 0
        lock.unlock()
    }
}
