import ArgumentParser

/// The `--timeout` every waiting command takes: whole seconds, at most a
/// week. The bound keeps the deadline arithmetic from overflowing
/// (`--timeout 9223372036854775807` trapped), and nothing authkit waits for
/// lasts longer.
enum TimeoutOption {
    static let longest = 7 * 24 * 60 * 60

    static func check(_ seconds: Int) throws {
        guard (1...longest).contains(seconds) else {
            throw ValidationError("--timeout takes 1–\(longest) seconds (a week at most); got \(seconds).")
        }
    }
}
