// swift-tools-version:6.0
//
// AuthKit — an OAuth 2.0 authorization-code toolkit with an OAuth 1.0a path.
//
// Module map (dependencies point one way, downwards):
//
//   AuthKit            core: provider descriptors, OAuth 2.0 flow engine,
//                      credentials and their stores, the Authenticator protocol.
//                      Depends only on swift-crypto and swift-log, so app and
//                      server code can use it without pulling in SwiftNIO or the CLI.
//   AuthKitOAuth1      OAuth 1.0a (RFC 5849) signing and three-legged flow,
//                      behind the same Authenticator protocol.
//   AuthKitTestSupport test-only: a real HTTP server on 127.0.0.1 (SwiftNIO)
//                      that records the exact bytes it receives.
//   AuthKitSignBenchmark  not a product: times OAuth 1.0a signing
//                      (Benchmarks/run-signing-benchmark compares it with oauthlib).
import PackageDescription

let package = Package(
    name: "AuthKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "AuthKit", targets: ["AuthKit"]),
        .library(name: "AuthKitOAuth1", targets: ["AuthKitOAuth1"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        .target(
            name: "AuthKit",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AuthKitOAuth1",
            dependencies: [
                "AuthKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Not a product: `Benchmarks/run-signing-benchmark` builds and runs it.
        .executableTarget(
            name: "AuthKitSignBenchmark",
            dependencies: ["AuthKitOAuth1"]
        ),
        .target(
            name: "AuthKitTestSupport",
            dependencies: [
                "AuthKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/AuthKitTestSupport"
        ),
        .testTarget(
            name: "AuthKitTests",
            dependencies: ["AuthKit", "AuthKitTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AuthKitOAuth1Tests",
            dependencies: ["AuthKitOAuth1", "AuthKit", "AuthKitTestSupport"],
            exclude: ["Server"]
        ),
    ]
)
