#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The base string as swift-crypto's `HMAC.update(data:)` takes it: a
/// `DataProtocol` of one region, with types that are not generic.
///
/// `update(data:)` is generic and not inlinable, so it runs unspecialized and
/// asks the runtime for the metadata of its argument's `Regions` and their
/// iterator on every call. For `UnsafeRawBufferPointer` those are
/// `CollectionOfOne<…>` and its iterator, generic types whose metadata is
/// looked up in a locked cache each time: about 5% of a signature, measured.
/// Here they are plain structs, whose metadata is static.
struct SignedBytes: DataProtocol {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = UnsafeRawBufferPointer(bytes) }

    var regions: Regions { Regions(bytes: bytes) }
    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }
    subscript(position: Int) -> UInt8 { bytes[position] }

    /// The one region, `bytes`.
    struct Regions: BidirectionalCollection {
        let bytes: UnsafeRawBufferPointer
        var startIndex: Int { 0 }
        var endIndex: Int { 1 }
        subscript(position: Int) -> UnsafeRawBufferPointer {
            precondition(position == 0, "SignedBytes has one region")
            return bytes
        }
        func index(after index: Int) -> Int { index + 1 }
        func index(before index: Int) -> Int { index - 1 }
        func makeIterator() -> Iterator { Iterator(region: bytes) }

        struct Iterator: IteratorProtocol {
            var region: UnsafeRawBufferPointer?
            mutating func next() -> UnsafeRawBufferPointer? {
                defer { region = nil }
                return region
            }
        }
    }
}
