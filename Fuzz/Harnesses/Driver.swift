// Starting libFuzzer on one harness, and replaying files through one.
import Foundation

/// The signature of `LLVMFuzzerTestOneInput`: what each harness is.
typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// The harnesses, by the name Fuzz/run, the corpus folders and findings use.
let harnesses: [String: FuzzTarget] = [
    "redirect": { fuzzRedirect($0, $1) },
    "callback": { fuzzCallback($0, $1) },
    "descriptor": { fuzzDescriptor($0, $1) },
    "token-response": { fuzzTokenResponse($0, $1) },
    "sandbox": { fuzzSandbox($0, $1) },
    "oauth1-signing": { fuzzOAuth1Signing($0, $1) },
    "bearer-challenge": { fuzzBearerChallenge($0, $1) },
    "json": { fuzzJSON($0, $1) },
    "id-token": { fuzzIDToken($0, $1) },
    "id-token-claims": { fuzzIDTokenClaims($0, $1) },
    "web-input": { fuzzWebInput($0, $1) },
    "response-head": { fuzzResponseHead($0, $1) },
]

/// What a harness needs done before libFuzzer starts counting.
let preparations: [String: @Sendable () -> Void] = ["sandbox": { prepareSandbox() }]

/// The harness this run fuzzes; libFuzzer's symbol below calls it.
nonisolated(unsafe) var selectedHarness: FuzzTarget?

/// libFuzzer links against this symbol; the driver below is handed the
/// selected harness itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    selectedHarness?(start, count) ?? 0
}

#if FUZZING
    /// libFuzzer's entry point when the program has its own `main`
    /// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // libFuzzer's C name.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ target: FuzzTarget
    ) -> CInt
#endif

/// Runs the harness named by the first argument: under libFuzzer in a
/// `-D FUZZING -sanitize=fuzzer` build (Fuzz/run), with the other arguments
/// as libFuzzer's; else once on each file named after it, to reproduce a
/// finding with a plain `swift build`.
func fuzzMain() -> Never {
    let arguments = CommandLine.arguments
    guard arguments.count > 1, let harness = harnesses[arguments[1]] else {
        FileHandle.standardError.write(
            Data(
                "usage: FuzzAuthKit HARNESS [libFuzzer options or files]; harnesses: \(harnesses.keys.sorted().joined(separator: ", "))\n"
                    .utf8))
        exit(64)
    }
    selectedHarness = harness
    preparations[arguments[1]]?()
    #if FUZZING
        // libFuzzer reads its own options: the harness's name is taken out.
        var argv = [CommandLine.unsafeArgv[0]] + (2..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] } + [nil]
        var argc = CInt(argv.count - 1)
        let status = argv.withUnsafeMutableBufferPointer { buffer -> CInt in
            var base = buffer.baseAddress!
            return LLVMFuzzerRunDriver(&argc, &base, harness)
        }
        exit(status)
    #else
        for path in arguments.dropFirst(2) {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(66)
            }
            _ = data.withUnsafeBytes { harness($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            print("ran \(path) (\(data.count) bytes)")
        }
        exit(0)
    #endif
}
