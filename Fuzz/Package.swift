// swift-tools-version:6.2
//
// The libFuzzer harnesses (Harnesses/), one program that takes the harness's
// name as its first argument. A package of its own so that a plain build of
// AuthKit compiles only what users depend on; it depends on the root by path.
// `Fuzz/run` builds it with `-sanitize=fuzzer,address -D FUZZING` and fuzzes
// each harness; a plain build makes a replayer:
//
//   swift build --package-path Fuzz && Fuzz/.build/debug/FuzzAuthKit redirect FILE
import PackageDescription

let package = Package(
    name: "AuthKitFuzz",
    dependencies: [.package(name: "AuthKit", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzAuthKit",
            dependencies: [
                .product(name: "AuthKit", package: "AuthKit"),
                .product(name: "AuthKitOAuth1", package: "AuthKit"),
                .product(name: "AuthKitSandbox", package: "AuthKit"),
                .product(name: "AuthKitServer", package: "AuthKit"),
            ],
            path: "Harnesses"
        )
    ]
)
