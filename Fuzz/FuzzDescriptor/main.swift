// libFuzzer target: descriptor JSON decoding and validation, the path every
// file in providers/ and ~/.authkit takes.
import AuthKit
import Foundation
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    _ = try? DescriptorLoader().decode(data, file: "fuzz.json")
    return 0
}

fuzzMain { fuzzTestOneInput($0, $1) }
