// swift-tools-version:6.2
//
// AuthKit — an OAuth 2.0 authorization-code toolkit with an OAuth 1.0a path.
//
// Module map (dependencies point one way, downwards):
//
//   CAuthKitLinux      the C APIs AuthKit uses on Linux: getrandom(2) for its
//                      random state and verifiers; libcurl (the HTTP transport)
//                      and libsecret (the keyring store), each loaded on first
//                      use (dlopen) rather than linked.
//   AuthKit            core: provider descriptors, OAuth 2.0 flow engine,
//                      credentials and their stores, the Authenticator protocol.
//                      Depends only on swift-crypto, jwt-kit (JOSE on swift-crypto),
//                      swift-log and swift-http-types (the request/response
//                      currency of HTTPClient), so app and
//                      server code can use it without pulling in SwiftNIO or the CLI.
//   AuthKitFoundationNetworking  on Linux, URLSessionHTTPClient and URLRequest
//                      signing (FoundationNetworking links libcurl; AuthKit
//                      loads libcurl only when it sends a request). Empty on
//                      Apple platforms, where both are in AuthKit. A product of
//                      its own: in the AuthKit product, it made every program
//                      built on AuthKit need libcurl and its thirty libraries
//                      at start (`readelf -d`), whether it sent a request or not.
//   AuthKitOAuth1      OAuth 1.0a (RFC 5849) signing and three-legged flow,
//                      behind the same Authenticator protocol.
//   AuthKitLoopback    the loopback redirect listener (RFC 8252 §7.3) and the
//                      system-browser launcher: a UserAgent built on SwiftNIO,
//                      kept out of AuthKit so the core stays free of NIO.
//   AuthKitAsyncHTTPClient  an HTTPClient on AsyncHTTPClient, for servers
//                      already on SwiftNIO (pooled connections).
//   AuthKitSandbox     a local authorization server emulating a provider from
//                      its descriptor (offline sign-ins, users' tests); SwiftNIO.
//   AuthKitApple       ASWebAuthenticationSession user agent and Keychain store
//                      (Apple SDKs only; their portable logic builds everywhere).
//   AuthKitServer      "Sign in with …" for web backends, framework-neutral:
//                      the two requests, sessions, sign-out; store protocols
//                      with in-memory implementations (swift-crypto only).
//   AuthKitPostgres    its stores and a CredentialStore on PostgreSQL
//                      (postgres-nio): one refresh across machines.
//   AuthKitHummingbird its routes on Hummingbird 2.
//   authkit            the command-line tool (swift-argument-parser, swift-log).
//
//   On Linux, AuthKit, AuthKitOAuth1, AuthKitLoopback, AuthKitSandbox and
//   authkit import FoundationEssentials, not Foundation (the usual
//   `#if canImport(FoundationEssentials)` pair; Apple platforms get Foundation):
//   the whole of Foundation would link FoundationInternationalization, ICU and a
//   quarter more protocol conformances into every start. AuthKit/Platform holds
//   the little they used from it (a lock, trimming, two POSIX file questions).
//   AuthKitStoreStress test-only: a separate process writing credentials,
//                      for AuthKitTests (CrossProcessStoreTests).
//   AuthKitTestSupport test-only: real HTTP(S) servers on 127.0.0.1 (SwiftNIO, NIOSSL)
//                      that record the exact bytes they receive, and a launcher
//                      for the independent Python peers in Tests/Interop/servers.
import PackageDescription

let package = Package(
    name: "AuthKit",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "AuthKit", targets: ["AuthKit"]),
        .library(name: "AuthKitFoundationNetworking", targets: ["AuthKitFoundationNetworking"]),
        .library(name: "AuthKitOAuth1", targets: ["AuthKitOAuth1"]),
        .library(name: "AuthKitLoopback", targets: ["AuthKitLoopback"]),
        .library(name: "AuthKitAsyncHTTPClient", targets: ["AuthKitAsyncHTTPClient"]),
        .library(name: "AuthKitSandbox", targets: ["AuthKitSandbox"]),
        .library(name: "AuthKitApple", targets: ["AuthKitApple"]),
        .library(name: "AuthKitServer", targets: ["AuthKitServer"]),
        .library(name: "AuthKitPostgres", targets: ["AuthKitPostgres"]),
        .library(name: "AuthKitHummingbird", targets: ["AuthKitHummingbird"]),
        .executable(name: "authkit", targets: ["authkit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        // JOSE: ID token signatures (OpenID Connect), on swift-crypto.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // Web backends: PostgreSQL stores, and Hummingbird 2 routes.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.21.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        // Tests only: a TLS server whose certificate no CA vouches for.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
    ],
    targets: [
        // On Linux: libcurl, for the transport (CurlHTTPClient): the library
        // FoundationNetworking wraps, driven directly to bound what it reads;
        // libsecret, for SecretServiceCredentialStore. Both loaded with dlopen
        // on first use, not linked (see their headers); curl's header comes
        // from libcurl4-openssl-dev, libsecret needs none. And getrandom(2),
        // for SecureRandom (Apple platforms use arc4random_buf).
        .target(name: "CAuthKitLinux"),
        .target(
            name: "AuthKit",
            dependencies: [
                .target(name: "CAuthKitLinux", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // On Linux, AuthKit's URLSession transport and URLRequest signing: they
        // need FoundationNetworking, which links libcurl, so they are kept out
        // of AuthKit there. On Apple platforms both are in AuthKit and this
        // module is empty. Its files are links to AuthKit's.
        .target(
            name: "AuthKitFoundationNetworking",
            dependencies: ["AuthKit", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: [.define("AUTHKIT_FOUNDATION_NETWORKING")]
        ),
        .target(
            name: "AuthKitOAuth1",
            dependencies: [
                "AuthKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "AuthKitLoopback",
            dependencies: [
                "AuthKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                // FilePath for Subprocess on Linux (Apple platforms have System).
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ]
        ),
        // An HTTPClient on AsyncHTTPClient, for server applications already on
        // SwiftNIO: pooled keep-alive connections. Its own product, so the core
        // never depends on SwiftNIO.
        .target(
            name: "AuthKitAsyncHTTPClient",
            dependencies: [
                "AuthKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), // its errors, told apart as TLS failures
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A local authorization server that emulates a provider from its
        // descriptor, for offline sign-ins and for users' tests. On SwiftNIO
        // (already a dependency) rather than Hummingbird: see docs/sandbox.md.
        .target(
            name: "AuthKitSandbox",
            dependencies: [
                "AuthKit",
                "AuthKitOAuth1",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Apple platforms: a UserAgent on ASWebAuthenticationSession and a
        // Keychain CredentialStore (Apple/, compiled only where the SDK is),
        // and their portable logic (Portable/, compiled and tested on Linux).
        .target(name: "AuthKitApple", dependencies: ["AuthKit"]),
        // Web backends: "Sign in with …" on several instances, independent
        // of any web framework (the two requests, sessions, sign-out), with
        // in-memory stores for one instance.
        .target(
            name: "AuthKitServer",
            dependencies: ["AuthKit", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // AuthKitServer's stores and a CredentialStore in PostgreSQL: one
        // refresh across machines (advisory locks), tokens sealed with AES-GCM.
        .target(
            name: "AuthKitPostgres",
            dependencies: [
                "AuthKit", "AuthKitServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // AuthKitServer's routes on Hummingbird 2.
        .target(
            name: "AuthKitHummingbird",
            dependencies: [
                "AuthKit", "AuthKitServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The command-line tool. Only it depends on swift-argument-parser.
        .executableTarget(
            name: "authkit",
            dependencies: [
                "AuthKit",
                "AuthKitOAuth1",
                "AuthKitLoopback",
                "AuthKitSandbox",
                // The Keychain, for `AUTHKIT_STORE=keyring` on macOS.
                .target(name: "AuthKitApple", condition: .when(platforms: [.macOS])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // `token setup-git` runs git (AuthKitLoopback links it already).
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ],
            path: "Sources/AuthKitCLI"
        ),
        // Test-only: a separate process saving to a FileCredentialStore, run
        // by AuthKitTests' CrossProcessStoreTests (many at once, and killed mid-write).
        .executableTarget(
            name: "AuthKitStoreStress",
            dependencies: ["AuthKit"],
            path: "Tests/AuthKitStoreStress"
        ),
        .target(
            name: "AuthKitTestSupport",
            dependencies: [
                "AuthKit",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Child processes in tests (ChildProcess), as in the product.
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/AuthKitTestSupport"
        ),
        // The core's tests, with the transports beside it (AsyncHTTPClient
        // plays the same TransportContract), AuthKitApple's portable logic,
        // and the credential stores across processes (AuthKitStoreStress, a
        // dependency so that `swift test` builds it).
        .testTarget(
            name: "AuthKitTests",
            dependencies: [
                "AuthKit", "AuthKitFoundationNetworking", "AuthKitTestSupport", "AuthKitAsyncHTTPClient",
                "AuthKitApple",
                "AuthKitStoreStress",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                // An OpenID provider's signing keys, independent of the verifier's jwt-kit.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            exclude: ["Corpus"] // data the tests read by path, not sources
        ),
        .testTarget(
            name: "AuthKitOAuth1Tests",
            dependencies: [
                "AuthKitOAuth1", "AuthKit", "AuthKitFoundationNetworking", "AuthKitTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "AuthKitLoopbackTests",
            dependencies: ["AuthKitLoopback", "AuthKit", "AuthKitTestSupport"]
        ),
        .testTarget(
            name: "AuthKitSandboxTests",
            dependencies: [
                "AuthKitSandbox", "AuthKit", "AuthKitFoundationNetworking", "AuthKitOAuth1", "AuthKitTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // An RSA client key (PS256 assertions).
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // Runs the built `authkit` binary as a subprocess (the dependency makes
        // `swift test` build it).
        .testTarget(
            name: "AuthKitCLITests",
            dependencies: [
                "authkit", "AuthKit", "AuthKitSandbox", "AuthKitTestSupport",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ]
        ),
        // The web backend against a real PostgreSQL (.ci/run starts one) and
        // Hummingbird's test client.
        .testTarget(
            name: "AuthKitServerTests",
            dependencies: [
                "AuthKitServer", "AuthKitPostgres", "AuthKitHummingbird", "AuthKitSandbox", "AuthKitTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ]
        ),
    ]
)
