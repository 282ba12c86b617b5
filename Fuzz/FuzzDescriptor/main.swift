// libFuzzer target: descriptor JSON decoding and validation, the path every
// file in providers/ and ~/.authkit takes.
import AuthKit
import Foundation
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    guard let descriptor = try? DescriptorLoader().decode(data, file: "fuzz.json") else { return 0 }
    // An accepted descriptor survives a round trip: the loader's unknown-member
    // check re-encodes it, and `authkit` may write descriptors back out.
    do {
        let again = try DescriptorLoader().decode(try JSONEncoder().encode(descriptor), file: "fuzz.json")
        precondition(again == descriptor, "round trip changed the descriptor: \(descriptor) vs \(again)")
    } catch {
        preconditionFailure("an accepted descriptor does not load once re-encoded: \(error)")
    }
    return 0
}

fuzzMain { fuzzTestOneInput($0, $1) }
