import Foundation

/// The providers AuthKit knows: the bundled `providers/*.json`, then the user's
/// `$AUTHKIT_HOME/providers`, then any directories the caller adds. A later
/// directory's file with the same `id` replaces an earlier one, so a user can
/// correct a bundled descriptor without a rebuild.
///
/// A file that fails to load does not hide the others: it is kept in
/// ``problems``, and asking for its id (its file name) reports those problems
/// rather than silently falling back to a bundled file the user meant to replace.
public struct ProviderCatalog: Sendable {
    /// A loaded descriptor and the file it came from.
    package struct Entry: Sendable, Hashable {
        package var descriptor: ProviderDescriptor
        /// The descriptor this one replaced (a bundled one a user corrected), if any.
        package var replaced: ProviderDescriptor?
        /// The file's path; bundled descriptors show `(bundled) providers/<name>.json`.
        package var file: String { descriptor.source }

        /// Hosts this descriptor sends to that the one it replaced did not, sorted.
        package var newHosts: [String] {
            guard let replaced else { return [] }
            return descriptor.endpointHosts.subtracting(replaced.endpointHosts).sorted()
        }
    }

    package private(set) var entries: [String: Entry] = [:]
    /// Problems of files that failed to load, by the file's base name.
    public private(set) var problems: [String: [FileIssue]] = [:]

    /// Loads the compiled-in descriptors (when `includeBundled`), then every
    /// `*.json` in `directories` (except `schema.json`), in order. Missing
    /// directories are skipped: a user without overrides has none.
    public init(includeBundled: Bool = false, directories: [URL]) {
        let loader = DescriptorLoader()
        if includeBundled {
            for file in Self.bundledFiles {
                add(data: file.data, path: file.path, stem: Self.stem(of: file.path), loader: loader)
            }
        }
        for directory in directories {
            let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent })
            where file.pathExtension == "json" && file.lastPathComponent != "schema.json" {
                let stem = file.deletingPathExtension().lastPathComponent
                do {
                    add(data: try Data(contentsOf: file), path: file.path, stem: stem, loader: loader)
                } catch {
                    problems[stem] = [FileIssue(file: file.path, field: "", problem: "cannot be read (\(DescriptorLoader.reason(error))).")]
                    entries[stem] = nil
                }
            }
        }
    }

    private mutating func add(data: Data, path: String, stem: String, loader: DescriptorLoader) {
        do {
            let descriptor = try loader.decode(data, file: path)
            // A stray notes.json must not silently become `github`.
            guard descriptor.id == stem else {
                problems[stem] = [Self.nameMismatch(file: path, id: descriptor.id)]
                entries[stem] = nil
                return
            }
            if let clash = environmentClash(descriptor) {
                problems[stem] = [clash]
                entries[stem] = nil
                return
            }
            problems[stem] = nil
            entries[descriptor.id] = Entry(descriptor: descriptor, replaced: entries[descriptor.id]?.descriptor)
        } catch AuthKitError.invalidFile(let issues) {
            problems[stem] = issues
            entries[stem] = nil
        } catch {
            problems[stem] = [FileIssue(file: path, field: "", problem: "\(error)")]
            entries[stem] = nil
        }
    }

    /// A descriptor's file must be named after its id.
    package static func nameMismatch(file: String, id: String) -> FileIssue {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        return FileIssue(file: file, field: "id", problem: "is '\(id)', but the file is named '\(name)'; a descriptor's file name must be its id: rename the file to \(id).json, or change the id.")
    }

    /// A setting of `descriptor` read from an environment variable another
    /// loaded provider (with a different id) reads too: `my-gitlab` and
    /// `my_gitlab` both read AUTHKIT_MY_GITLAB_CLIENT_ID. Neither may be read
    /// as the other's, so the later file is refused.
    private func environmentClash(_ descriptor: ProviderDescriptor) -> FileIssue? {
        let mine = Set(ClientSettings.environmentVariables(for: descriptor))
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) where id != descriptor.id {
            if let shared = mine.intersection(ClientSettings.environmentVariables(for: entry.descriptor)).sorted().first {
                return FileIssue(file: descriptor.source, field: "id", problem: "its settings would be read from \(shared), which provider '\(id)' (\(entry.file)) reads too; rename this provider's id or placeholder so that no variable names two providers.")
            }
        }
        return nil
    }

    private static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(".json") ? String(name.dropLast(5)) : name
    }

    /// The bundled descriptors (or `$AUTHKIT_BUNDLED_PROVIDERS`), then
    /// `$AUTHKIT_HOME/providers`, then `additional`.
    public static func standard(
        additional: [URL] = [], environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProviderCatalog {
        var directories = [URL]()
        let override = bundledDirectoryOverride(environment: environment)
        if let override { directories.append(override) }
        directories.append(AuthKitHome.directory(environment: environment).appendingPathComponent("providers", isDirectory: true))
        directories += additional
        return ProviderCatalog(includeBundled: override == nil, directories: directories)
    }

    /// All loaded ids, sorted.
    public var ids: [String] { entries.keys.sorted() }

    /// The descriptor for `id`.
    /// - Throws: ``AuthKitError/invalidFile(_:)`` if that provider's file is
    ///   broken, else ``AuthKitError/unknownProvider(id:suggestions:)`` with the nearest ids.
    public func descriptor(id: String) throws -> ProviderDescriptor {
        if let issues = problems[id] { throw AuthKitError.invalidFile(issues) }
        if let entry = entries[id] { return entry.descriptor }
        throw AuthKitError.unknownProvider(id: id, suggestions: suggestions(for: id))
    }

    /// Known ids within a small edit distance of `id`, nearest first.
    package func suggestions(for id: String) -> [String] {
        let scored = ids.map { ($0, Self.editDistance(id.lowercased(), $0)) }
        let limit = max(2, id.count / 3)
        return scored.filter { $0.1 <= limit || $0.0.hasPrefix(id.lowercased()) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    // MARK: - Bundled descriptors

    /// The descriptors that ship with AuthKit: the repository's `providers/*.json`,
    /// compiled in by `scripts/embed-providers` (see `BundledDescriptors`), so
    /// they need no resource bundle at run time. Each is (display path, JSON).
    package static var bundledFiles: [(path: String, data: Data)] {
        BundledDescriptors.files.map { ("(bundled) providers/\($0.name)", Data($0.json.utf8)) }
    }

    /// `$AUTHKIT_BUNDLED_PROVIDERS`: a directory that replaces the compiled-in
    /// descriptors, for packagers who install the files under `share/` and for tests.
    package static func bundledDirectoryOverride(environment: [String: String]) -> URL? {
        guard let path = environment["AUTHKIT_BUNDLED_PROVIDERS"], !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}
