// swift-tools-version:6.2
//
// AuthKit's side of Benchmarks/run-benchmarks, apart from the root package so
// that a plain `swift build` of AuthKit compiles only what users depend on
// (the way async-http-client keeps its Examples/). It depends on the root by
// path; run-benchmarks builds it with `--package-path Benchmarks`.
//
//   AuthKitBenchmark        the library rows: exchange, refresh, OAuth 1.0a signing.
//   AuthKitFloor            a hello world linking what authkit links: the start-up
//                           floor of a sign-in.
//   AuthKitFloorFoundation  a hello world linking Foundation alone.
//   web-stack-floor         the web rows' floor: the example web app's HTTP work on
//                           Hummingbird and AsyncHTTPClient, without AuthKit.
import PackageDescription

let package = Package(
    name: "AuthKitBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "AuthKit", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "AuthKitBenchmark",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitOAuth1", package: "AuthKit"),
                .product(name: "AuthKitAsyncHTTPClient", package: "AuthKit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "AuthKitFloor",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitOAuth1", package: "AuthKit"),
                .product(name: "AuthKitLoopback", package: "AuthKit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "AuthKitFloorFoundation"),
        .executableTarget(
            name: "web-stack-floor",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Sources/WebStackFloor"
        ),
    ]
)
