// swift-tools-version:6.2
//
// The example programs README.md and docs/library.md show, verbatim
// (ReadmeTests holds the documents to these files). A package of their own,
// depending on AuthKit by path as an app would by URL, so that a plain build
// of AuthKit compiles only what users depend on (async-http-client keeps its
// Examples/ the same way). `.ci/run` builds it.
//
//   swift run --package-path Examples QiitaSignInExample
//   swift run --package-path Examples TwitterSignInExample
//   swift run --package-path Examples GoogleSignInExample --sandbox
//   swift run --package-path Examples authkit-web-example --provider google --sandbox URL
//
// Examples/iOS/ is an app's file, not a target here: scripts/typecheck-apple
// type-checks it against stubs of the Apple SDKs.
import PackageDescription

let package = Package(
    name: "AuthKitExamples",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "AuthKit", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.21.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        // Sign in to Qiita through a pasted redirect, then call its API.
        .executableTarget(
            name: "QiitaSignInExample",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "QiitaSignIn"
        ),
        // OAuth 1.0a: sign in to X (Twitter) through the browser, then post.
        .executableTarget(
            name: "TwitterSignInExample",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitFoundationNetworking", package: "AuthKit"), // URLRequest signing on Linux
                .product(name: "AuthKitOAuth1", package: "AuthKit"),
                .product(name: "AuthKitLoopback", package: "AuthKit"),
            ],
            path: "TwitterSignIn"
        ),
        // OpenID Connect: "Sign in with Google", the identity verified;
        // offline against the sandbox with --sandbox.
        .executableTarget(
            name: "GoogleSignInExample",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitLoopback", package: "AuthKit"),
                .product(name: "AuthKitSandbox", package: "AuthKit"),
            ],
            path: "GoogleSignIn"
        ),
        // A web backend: "Sign in with …" on Hummingbird 2, one instance or
        // many on PostgreSQL (docs/web.md).
        .executableTarget(
            name: "authkit-web-example",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitServer", package: "AuthKit"),
                .product(name: "AuthKitPostgres", package: "AuthKit"),
                .product(name: "AuthKitHummingbird", package: "AuthKit"),
                .product(name: "AuthKitAsyncHTTPClient", package: "AuthKit"),
                .product(name: "AuthKitSandbox", package: "AuthKit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "WebApp"
        ),
    ]
)
