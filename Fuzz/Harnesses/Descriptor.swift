import Foundation

// libFuzzer harness: descriptor JSON decoding and validation, the path every
// file in providers/ and ~/.authkit takes.
@testable import AuthKit

func fuzzDescriptor(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    guard let descriptor = try? DescriptorLoader().decode(data, file: "fuzz.json") else { return 0 }
    // An accepted descriptor survives a round trip: written out with every
    // default explicit (`authkit providers show`), it resolves to the same thing.
    do {
        let again = try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: "fuzz.json")
        precondition(again == descriptor, "round trip changed the descriptor: \(descriptor) vs \(again)")
    } catch {
        preconditionFailure("an accepted descriptor does not load once re-encoded: \(error)")
    }
    return 0
}
