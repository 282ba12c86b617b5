import Foundation

/// Temporary directories for tests, removed when the test process exits, so a
/// run leaves no `/tmp/authkit-*` behind even when a test fails half-way.
public enum TemporaryDirectory {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: [URL] = []
    private static let cleanup: Void = {
        atexit {
            for url in TemporaryDirectory.lock.withLock({ TemporaryDirectory.made }) {
                try? FileManager.default.removeItem(at: url)
            }
        }
    }()

    /// A fresh path `$TMPDIR/<prefix>-<UUID>` (not created), removed at exit.
    public static func url(_ prefix: String) -> URL {
        _ = cleanup
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        lock.withLock { made.append(url) }
        return url
    }
}
