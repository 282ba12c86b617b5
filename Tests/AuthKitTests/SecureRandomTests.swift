import Foundation
import Testing

@testable import AuthKit

@Suite struct Base64URLTests {
    /// RFC 4648 §10's vectors, in the URL alphabet without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(_ input: String, _ expected: String) {
        #expect(Base64URL.encode(Array(input.utf8)) == expected)
    }

    @Test func agreesWithFoundationOnRandomBytes() {
        for count in 0..<70 {
            let bytes = SecureRandom.bytes(count)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                    of: "=", with: "")
            #expect(Base64URL.encode(bytes) == foundation)
        }
    }

    @Test func thePoolHandsOutEachByteOnce() {
        // 16-byte draws across several refills of the 4 KiB pool.
        var draws = Set<[UInt8]>()
        for _ in 0..<1000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes.withUnsafeMutableBytes { SecureRandom.fillFromPool($0) }
            draws.insert(bytes)
        }
        #expect(draws.count == 1000)
        // A request larger than a quarter of the pool goes to the kernel directly.
        var large = [UInt8](repeating: 0, count: 2000)
        large.withUnsafeMutableBytes { SecureRandom.fillFromPool($0) }
        #expect(Set(large).count > 200)
    }

    @Test func randomBytesAreNotAllTheSame() {
        let draws = Set((0..<100).map { _ in SecureRandom.bytes(16) })
        #expect(draws.count == 100)
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(1000).count == 1000)
    }
}
