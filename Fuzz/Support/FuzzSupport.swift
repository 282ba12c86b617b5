// Shared by the fuzz targets in Fuzz/: starting libFuzzer, and replaying files.
import Foundation

/// The signature of `LLVMFuzzerTestOneInput`.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

#if FUZZING
/// libFuzzer's entry point when the program has its own `main`
/// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ target: FuzzTarget) -> CInt
#endif

/// Runs the fuzz target: under libFuzzer in a `-D FUZZING -sanitize=fuzzer`
/// build (Fuzz/run), else once on each file named on the command line, to
/// reproduce a finding with a plain `swift build`.
public func fuzzMain(_ target: FuzzTarget) -> Never {
    #if FUZZING
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
    #else
    for path in CommandLine.arguments.dropFirst() {
        guard let data = FileManager.default.contents(atPath: path) else {
            FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
            exit(66)
        }
        _ = data.withUnsafeBytes { target($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        print("ran \(path) (\(data.count) bytes)")
    }
    exit(0)
    #endif
}
