import Foundation

/// The descriptors that ship with AuthKit: the repository's `providers/*.json`,
/// compiled into the library by `scripts/embed-providers` (see
/// ``BundledDescriptors``), so they need no resource bundle at run time.
///
/// `$AUTHKIT_BUNDLED_PROVIDERS` replaces them with a directory, for packagers
/// who install the files under `share/` and for tests.
public enum BundledProviders {
    /// A directory that replaces the compiled-in descriptors, if configured.
    public static func directoryOverride(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        guard let path = environment["AUTHKIT_BUNDLED_PROVIDERS"], !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// The compiled-in descriptor files as (display path, JSON data).
    public static var files: [(path: String, data: Data)] {
        BundledDescriptors.files.map { ("(bundled) providers/\($0.name)", Data($0.json.utf8)) }
    }
}
