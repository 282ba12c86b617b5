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

    /// A child of fork(2) starts with an empty pool: it draws its own bytes
    /// from the kernel, never the ones its parent hands out next (state
    /// and PKCE verifiers come from the pool: two processes with one
    /// verifier would be two sign-ins one code could serve).
    @Test func aForkedChildDoesNotHandOutItsParentsBytes() throws {
        _ = SecureRandom.token() // the pool is full now, its next bytes known to both after a fork
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        let child = fork()
        if child == 0 {
            var bytes = [UInt8](repeating: 0, count: 32)
            bytes.withUnsafeMutableBytes { SecureRandom.fillFromPool($0) }
            _ = bytes.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, 32) }
            _exit(0)
        }
        #expect(child > 0)
        close(pipeEnds[1])
        var parent = [UInt8](repeating: 0, count: 32)
        parent.withUnsafeMutableBytes { SecureRandom.fillFromPool($0) }
        var childs = [UInt8](repeating: 0, count: 32)
        let read = childs.withUnsafeMutableBytes { Foundation.read(pipeEnds[0], $0.baseAddress, 32) }
        close(pipeEnds[0])
        var status: Int32 = 0
        waitpid(child, &status, 0)
        #expect(read == 32)
        #expect(childs != parent)
        #expect(childs != [UInt8](repeating: 0, count: 32))
    }

    @Test func randomBytesAreNotAllTheSame() {
        let draws = Set((0..<100).map { _ in SecureRandom.bytes(16) })
        #expect(draws.count == 100)
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(1000).count == 1000)
    }
}
