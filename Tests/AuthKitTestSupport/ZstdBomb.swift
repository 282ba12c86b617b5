import Foundation

/// A Zstandard frame (RFC 8878) that decodes to `size` zero bytes from about
/// `size / 32768` bytes: a 128 KiB window and then RLE blocks (§3.1.1.2.2),
/// each four bytes standing for 128 KiB of one repeated byte. libcurl
/// decodes `zstd` as readily as `gzip` when the server sends it unasked, so
/// the size cap must hold for this encoding too.
public enum ZstdBomb {
    /// The largest block a frame with a 128 KiB window may hold (§3.1.1.2.3).
    static let blockSize = 128 << 10

    public static func make(inflatedSize size: Int) -> Data {
        var frame = Data([0x28, 0xB5, 0x2F, 0xFD]) // magic number 0xFD2FB528, little-endian
        frame.append(0x00) // frame header descriptor: no content size, not single-segment, no checksum, no dictionary
        frame.append(0x38) // window descriptor: exponent 7, mantissa 0, so 2^(10+7) = 128 KiB
        var left = size
        repeat {
            let count = min(left, blockSize)
            left -= count
            let isLast: UInt32 = left == 0 ? 1 : 0
            let header = isLast | 1 << 1 | UInt32(count) << 3 // Last_Block, Block_Type 1 (RLE), Block_Size
            frame.append(contentsOf: [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF)])
            frame.append(0x00) // the byte repeated
        } while left > 0
        return frame
    }
}
