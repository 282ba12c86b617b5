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
//   authkit            the command-line tool (swift-argument-parser, swift-log).
//   QiitaSignInExample the README's library example, built with the package.
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
        .executable(name: "authkit", targets: ["authkit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "AuthKit",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command-line tool. Only it depends on swift-argument-parser.
        .executableTarget(
            name: "authkit",
            dependencies: [
                "AuthKit",
                "AuthKitOAuth1",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/AuthKitCLI"
        ),
        // The README's Qiita example, compiled on every build so it cannot rot.
        .executableTarget(
            name: "QiitaSignInExample",
            dependencies: ["AuthKit"],
            path: "Sources/Examples/QiitaSignIn"
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
            dependencies: ["AuthKit", "AuthKitTestSupport"]
        ),
        // Runs the built `authkit` binary as a subprocess (the dependency makes
        // `swift test` build it).
        .testTarget(
            name: "AuthKitCLITests",
            dependencies: ["authkit", "AuthKit", "AuthKitTestSupport"]
        ),
        .testTarget(
            name: "AuthKitOAuth1Tests",
            dependencies: ["AuthKitOAuth1", "AuthKit", "AuthKitTestSupport"]
        ),
    ]
)
