import Foundation

/// A gzip stream that inflates to `size` zero bytes from about `size / 159`
/// bytes: one deflate block with fixed Huffman codes (RFC 1951 §3.2.6) made
/// of a literal 0 and then "repeat 258 bytes at distance 1" again and again.
/// The trailer is right (CRC-32 and length), so a bomb below a size cap
/// decodes as a real answer would: a client's refusal of the large one is
/// then its cap at work, not a bad checksum.
public enum GzipBomb {
    public static func make(inflatedSize size: Int) -> Data {
        // 8 repeats are 104 bits, 13 whole bytes: the bulk is one 13-byte
        // period copied, found by comparing the streams for 8 and 16 repeats.
        let repeats = max(0, (size - 1) / 258) / 8 * 8
        let small = deflate(repeats: 8, trailingLiterals: 0)
        let big = deflate(repeats: 16, trailingLiterals: 0)
        let split = (0...small.count).first { k in
            k + 13 <= big.count && Array(small[..<k]) + Array(big[k..<(k + 13)]) + Array(small[k...]) == big
        }!
        let period = big[split..<(split + 13)]
        var stream = deflate(repeats: 8, trailingLiterals: size - 1 - repeats * 258)
        var bulk = [UInt8]()
        bulk.reserveCapacity(max(0, repeats / 8 - 1) * 13)
        for _ in 0..<max(0, repeats / 8 - 1) { bulk.append(contentsOf: period) }
        if repeats >= 8 {
            stream.insert(contentsOf: bulk, at: split)
        } else {
            stream = deflate(repeats: 0, trailingLiterals: size - 1)
        }
        var data = Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
        data.append(contentsOf: stream)
        for value in [crc32OfZeros(size), UInt32(truncatingIfNeeded: size)] { // CRC32, ISIZE (RFC 1952 §2.3.1)
            data.append(contentsOf: [
                UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24),
            ])
        }
        return data
    }

    /// The CRC-32 (ISO-HDLC, as gzip uses) of `count` zero bytes, without
    /// feeding them one by one: feeding a zero byte is a linear map of the
    /// 32-bit register over GF(2), so `count` of them is that map's matrix
    /// raised to `count`, by repeated squaring (as zlib's `crc32_combine`).
    static func crc32OfZeros(_ count: Int) -> UInt32 {
        typealias Matrix = [UInt32] // column j is the image of bit j
        func apply(_ m: Matrix, _ vector: UInt32) -> UInt32 {
            (0..<32).reduce(0) { vector >> UInt32($1) & 1 == 1 ? $0 ^ m[$1] : $0 }
        }
        func multiply(_ a: Matrix, _ b: Matrix) -> Matrix { b.map { apply(a, $0) } }
        let zeroByte: Matrix = (0..<32).map { bit in
            var register = UInt32(1) << UInt32(bit)
            for _ in 0..<8 { register = register & 1 == 1 ? register >> 1 ^ 0xEDB8_8320 : register >> 1 }
            return register
        }
        var result: Matrix = (0..<32).map { UInt32(1) << UInt32($0) }
        var power = zeroByte
        var n = count
        while n > 0 {
            if n & 1 == 1 { result = multiply(power, result) }
            power = multiply(power, power)
            n >>= 1
        }
        return ~apply(result, 0xFFFF_FFFF)
    }

    /// The deflate block: a literal 0, `repeats` copies of 258 bytes, more literal zeros, end of block.
    static func deflate(repeats: Int, trailingLiterals: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.write(0b1, count: 1) // BFINAL
        writer.write(0b01, count: 2) // BTYPE = fixed Huffman
        writer.writeHuffman(0b00110000, count: 8) // literal 0
        for _ in 0..<repeats {
            writer.writeHuffman(0b11000101, count: 8) // length code 285: 258 bytes, no extra bits
            writer.writeHuffman(0b00000, count: 5) // distance code 0: distance 1
        }
        for _ in 0..<trailingLiterals { writer.writeHuffman(0b00110000, count: 8) }
        writer.writeHuffman(0b0000000, count: 7) // end of block (256)
        return writer.finish()
    }

    /// Deflate packs bits from the least significant end; Huffman codes are
    /// written most significant bit first.
    struct BitWriter {
        var bytes = [UInt8]()
        var current: UInt32 = 0
        var filled = 0

        mutating func write(_ value: UInt32, count: Int) {
            for bit in 0..<count { push((value >> UInt32(bit)) & 1) }
        }

        mutating func writeHuffman(_ code: UInt32, count: Int) {
            for bit in stride(from: count - 1, through: 0, by: -1) { push((code >> UInt32(bit)) & 1) }
        }

        private mutating func push(_ bit: UInt32) {
            current |= bit << UInt32(filled)
            filled += 1
            if filled == 8 {
                bytes.append(UInt8(current))
                current = 0
                filled = 0
            }
        }

        mutating func finish() -> [UInt8] {
            if filled > 0 { bytes.append(UInt8(current)) }
            return bytes
        }
    }
}
