// The lowest floor: a hello world linking only the Foundation authkit links
// (FoundationEssentials on Linux; Foundation where that is all there is), for
// Benchmarks/run-benchmarks' sign-in rows.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

print("hello at \(Date().timeIntervalSince1970 > 0)")
