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
//   AuthKitLoopback    the loopback redirect listener (RFC 8252 §7.3) and the
//                      system-browser launcher: a UserAgent built on SwiftNIO,
//                      kept out of AuthKit so the core stays free of NIO.
//   QiitaSignInExample the README's library example, built with the package.
//   AuthKitTestSupport test-only: a real HTTP server on 127.0.0.1 (SwiftNIO)
//                      that records the exact bytes it receives.
import PackageDescription

let package = Package(
    name: "AuthKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "AuthKit", targets: ["AuthKit"]),
        .library(name: "AuthKitLoopback", targets: ["AuthKitLoopback"]),
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
            name: "AuthKitLoopback",
            dependencies: [
                "AuthKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The README's Qiita example, compiled on every build so it cannot rot.
        .executableTarget(
            name: "QiitaSignInExample",
            dependencies: ["AuthKit"],
            path: "Sources/Examples/QiitaSignIn"
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
        .testTarget(
            name: "AuthKitLoopbackTests",
            dependencies: ["AuthKitLoopback", "AuthKit", "AuthKitTestSupport"]
        ),
    ]
)
