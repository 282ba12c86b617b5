// The lowest floor: a hello world linking Foundation only (no
// FoundationNetworking), for Benchmarks/run-benchmarks' sign-in rows.
import Foundation

print("hello at \(Date().timeIntervalSince1970 > 0)")
