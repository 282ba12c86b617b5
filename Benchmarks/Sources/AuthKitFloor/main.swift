// The start-up floor of `authkit`: a hello world that links what the CLI
// links (AuthKit, which loads libcurl only when it sends a request,
// AuthKitOAuth1, AuthKitLoopback with SwiftNIO, ArgumentParser, Logging) and
// does nothing.
// Benchmarks/run-benchmarks reports its wall time beside a sign-in's, so the
// part of the sign-in AuthKit controls is visible.
import ArgumentParser
import AuthKit
import AuthKitLoopback
import AuthKitOAuth1
import Logging

// Touch one symbol of each module so none is dropped at link time.
let linked: [Any.Type] = [
    ProviderCatalog.self, OAuth1Signer.self, LoopbackUserAgent.self, Logger.self, CommandConfiguration.self,
]
print("hello from \(linked.count) modules")
