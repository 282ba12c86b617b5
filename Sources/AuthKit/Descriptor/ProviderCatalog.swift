#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        /// The descriptor this one replaced (a bundled one a user corrected), if
        /// any: the file of its id loaded just before it.
        package var replaced: ProviderDescriptor?
        /// The first descriptor of its id that loaded (the bundled one, when
        /// there is one): what an override changes is told against it,
        /// however many files lie between (``newHosts``, ``addedAPIOrigins``,
        /// ``addedGitOrigins``). Against ``replaced``, an override behind an
        /// identical one, or behind a broken file, went unannounced.
        package var original: ProviderDescriptor?
        /// Problems of files of this id between the first and this one, which
        /// failed to load and were passed over (said, not silently dropped).
        package var passedOver: [FileIssue] = []
        /// The file's path; bundled descriptors show `(bundled) providers/<name>.json`.
        package var file: String { descriptor.source }

        /// Hosts this descriptor sends to that the one it replaced did not,
        /// sorted; placeholders with defaults compared by their defaults, so
        /// a changed default (`login.salesforce.com` made `evil.example`) counts.
        package var newHosts: [String] {
            guard let original else { return [] }
            return descriptor.defaultedEndpointHosts.subtracting(original.defaultedEndpointHosts).sorted()
        }

        /// API origins this descriptor lets credentials go to that the one it
        /// replaced did not (compared without case); empty when it lists none
        /// at all, so any origin; nil when it widens nothing. A pattern with
        /// a placeholder counts as written: where it allows depends on where
        /// a credential was issued, which ``newHosts`` covers.
        package var addedAPIOrigins: [String]? {
            guard let original, original.apiOrigins.isRestricted else { return nil }
            guard descriptor.apiOrigins.isRestricted else { return [] }
            // Each once: a file listing an origin twice named it twice.
            var seen = Set(original.apiOrigins.patterns.map { $0.lowercased() })
            let added = descriptor.apiOrigins.patterns.filter { seen.insert($0.lowercased()).inserted }
            return added.isEmpty ? nil : added
        }

        /// What this descriptor turns off or moves that the one it replaced
        /// had, in words: PKCE, the issuer (RFC 9207's `iss` check, ID
        /// token verification), OpenID Connect, DPoP, the token endpoint's
        /// host (where the client secret and codes go, even to a host the
        /// original used for something else, which ``newHosts`` does not
        /// count) and a loopback redirect made remote. A file someone else
        /// placed that weakens a sign-in must not do so silently.
        package var weakenedProtections: [String] {
            guard let original else { return [] }
            var said = [String]()
            if original.pkce.isEnabled, !descriptor.pkce.isEnabled { said.append("turns PKCE off") }
            if let was = original.issuer {
                if let now = descriptor.issuer {
                    if !Self.sameIssuer(
                        original.filledWithDefaults(was.identifier), descriptor.filledWithDefaults(now.identifier))
                    {
                        said.append("names another issuer (\(DisplayText.sanitized(now.identifier, limit: 120)))")
                    } else if was.includedInResponse, !now.includedInResponse {
                        said.append("no longer requires the redirect's iss (RFC 9207)")
                    }
                } else {
                    said.append("names no issuer (no iss check on the redirect, RFC 9207)")
                }
            }
            if original.openID != nil, descriptor.openID == nil { said.append("verifies no ID token (no openid)") }
            // Which tenants' ID tokens a multi-tenant issuer takes (values,
            // aliases, exclusions, the claim): a Microsoft file with
            // `excluding` removed took personal accounts' tokens where work
            // accounts were asked for, and said nothing. Removing it takes
            // fewer, and is not said.
            if let now = descriptor.openID?.multiTenantIssuer,
                original.openID?.multiTenantIssuer.map({ now.acceptsMore(than: $0) }) ?? true
            {
                said.append("changes which tenants' ID tokens are accepted (openid.multiTenantIssuer)")
            }
            if original.dpop == .on, descriptor.dpop == .off { said.append("turns DPoP off") }
            let tokenHost = { (descriptor: ProviderDescriptor) -> String? in
                descriptor.token.flatMap { PlaceholderValue.hostTemplate(in: $0.url) }.map {
                    descriptor.withDefaults(String($0))
                }
            }
            // A host the original never used is said by ``newHosts`` already.
            if let was = tokenHost(original), let now = tokenHost(descriptor), was != now,
                original.defaultedEndpointHosts.contains(now)
            {
                said.append("sends the token requests to \(DisplayText.sanitized(now, limit: 120)) instead of \(was)")
            }
            if DescriptorValidator.isLoopback(host: original.redirect.host),
                !DescriptorValidator.isLoopback(host: descriptor.redirect.host)
            {
                said.append(
                    "redirects to \(DisplayText.sanitized(descriptor.redirect.host, limit: 120)), not this machine")
            }
            return said
        }

        /// Whether two issuers take the same tokens: the path byte for byte,
        /// as the issuer is compared with `iss` (`…/realms/Main` and
        /// `…/realms/main` are two issuers); the scheme and host without
        /// case (RFC 3986 §6.2.2.1: one server, which writes its own
        /// spelling into its tokens).
        static func sameIssuer(_ a: String, _ b: String) -> Bool {
            func split(_ text: String) -> (origin: Substring, rest: Substring) {
                guard let start = text.firstRange(of: "://")?.upperBound else { return ("", text[...]) }
                let end = text[start...].firstIndex { "/?#".contains($0) } ?? text.endIndex
                return (text[..<end], text[end...])
            }
            let (first, second) = (split(a), split(b))
            return ExactText.sameIgnoringASCIICase(String(first.origin), String(second.origin))
                && ExactText.same(String(first.rest), String(second.rest))
        }

        /// Git origins this descriptor gives git the token at that the one it
        /// replaced did not (compared without case); nil when it adds none.
        package var addedGitOrigins: [String]? {
            guard original != nil, let git = descriptor.git else { return nil }
            var seen = Set((original?.git?.origins.patterns ?? []).map { $0.lowercased() })
            let added = git.origins.patterns.filter { seen.insert($0.lowercased()).inserted }
            return added.isEmpty ? nil : added
        }
    }

    /// One descriptor file, in load order.
    private struct Source: Sendable {
        var path: String
        /// The file's bytes, or why they could not be read.
        var contents: Result<Data, FileIssueBox>
        /// Position in load order: bundled files first, then each directory's.
        var order: Int
        /// A bundled file's id and placeholder names, known without parsing it.
        var outline: (id: String, placeholders: [String])?
    }

    private struct FileIssueBox: Error, Sendable { var issue: FileIssue }

    /// What a file name stands for once its files are read, later over earlier.
    private enum Resolution: Sendable {
        case entry(Entry)
        case problems([FileIssue])
    }

    /// Every file by base name (which must be its id), in load order.
    private let sources: [String: [Source]]
    /// Files are decoded and checked when their id is first asked for, not all
    /// at start-up: a command that signs in to one provider decodes one or two
    /// files, not the whole catalogue.
    private let cache = Cache()

    private final class Cache: Sendable {
        let resolutions = LockedValue([String: Resolution]())
        let sketches = LockedValue([Int: [String]?]())
    }

    /// Loaded descriptors by id. Asking for all of them decodes every file.
    package var entries: [String: Entry] {
        var entries = [String: Entry]()
        for stem in sources.keys { if case .entry(let entry)? = resolve(stem) { entries[stem] = entry } }
        return entries
    }

    /// Files that failed to load, by the file's base name: each an
    /// ``AuthKitError/Code/invalidFile`` error, whose description lists
    /// every problem of the file.
    public var problems: [String: AuthKitError] { fileIssues.mapValues { AuthKitError.invalidFile($0) } }

    /// The problems of each file that failed to load, by the file's base name.
    package var fileIssues: [String: [FileIssue]] {
        var problems = [String: [FileIssue]]()
        for stem in sources.keys { if case .problems(let issues)? = resolve(stem) { problems[stem] = issues } }
        return problems
    }

    /// Reads the compiled-in descriptors (when `includeBundled`), then every
    /// `*.json` in `directories` (except `schema.json`), in order. Missing
    /// directories are skipped: a user without overrides has none.
    ///
    /// The files are trusted as they are (an app's own bundle may belong to
    /// the system's installer); ``standard(additional:environment:)`` also
    /// refuses files another user could have written.
    public init(includeBundled: Bool = false, directories: [URL]) {
        self.init(includeBundled: includeBundled, directories: directories, refusingForeignFiles: false)
    }

    /// With `refusingForeignFiles`, a file that another user could have
    /// written (``FileSystem/foreignWriteProblem(at:)``) is not read: it is
    /// reported as that provider's problem, and hides an earlier file of the
    /// same name as any broken file does, so the provider fails closed.
    package init(includeBundled: Bool, directories: [URL], refusingForeignFiles: Bool) {
        var sources = [String: [Source]]()
        var order = 0
        func add(
            _ stem: String, _ path: String, _ contents: Result<Data, FileIssueBox>,
            outline: (id: String, placeholders: [String])? = nil
        ) {
            sources[stem, default: []].append(Source(path: path, contents: contents, order: order, outline: outline))
            order += 1
        }
        if includeBundled {
            for file in BundledDescriptors.files {
                add(
                    Self.stem(of: file.name), Self.bundledPath(file.name), .success(Data(file.json.utf8)),
                    outline: BundledDescriptors.outlines[file.name])
            }
        }
        var unread = [FileIssue]()
        for directory in directories {
            // Missing is the usual case (no files of one's own); anything else is said.
            guard FileManager.default.fileExists(atPath: directory.path) else { continue }
            if let kind = FileSystem.kindUnlessDirectory(directory.path) {
                unread.append(
                    FileIssue(
                        file: directory.path, field: "",
                        problem: "is \(kind), not a directory: no provider file is read from it. Move it aside."))
                continue
            }
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            } catch {
                unread.append(
                    FileIssue(
                        file: directory.path, field: "",
                        problem: "cannot be read (\(DescriptorLoader.reason(error))): no provider file is read from it."
                    ))
                continue
            }
            // A directory others can write in is said for each of its files
            // before any is opened: each was opened and read (a megabyte
            // each, as many as anyone put there; a link to a device opened
            // by its owner's command) only to be refused by its status.
            // Each file's provider fails with it, as one refused file does,
            // rather than fall back to the bundled file it was meant to replace.
            let directoryProblem =
                refusingForeignFiles
                ? FileSystem.foreignWriteProblem(
                    inDirectory: directory.path, harm: "send your sign-ins elsewhere", refusal: "no file in it is read")
                : nil
            let files = names.map { directory.appendingPathComponent($0) }
            for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent })
            // Hidden files are an editor's (Emacs's `.#qiita.json` lock, a
            // dangling link, warned about by every `providers list`), not providers.
            where file.pathExtension.lowercased() == "json" && file.lastPathComponent.lowercased() != "schema.json"
                && !file.lastPathComponent.hasPrefix(".")
            {
                let stem = file.deletingPathExtension().lastPathComponent
                if let directoryProblem {
                    add(
                        stem, file.path,
                        .failure(
                            FileIssueBox(issue: FileIssue(file: file.path, field: "", problem: directoryProblem))))
                    continue
                }
                // `github.JSON` (a save dialog's spelling) was skipped, and
                // the bundled `github` used without a word.
                guard file.pathExtension == "json" else {
                    add(
                        stem, file.path,
                        .failure(
                            FileIssueBox(
                                issue: FileIssue(
                                    file: file.path, field: "",
                                    problem:
                                        "is named with '.\(file.pathExtension)'; provider files end in '.json', in lower case. Rename it to \(stem).json."
                                ))))
                    continue
                }
                do {
                    let (data, info) = try FileSystem.contentsAndStatus(
                        of: file.path, accepting: .regularFile, limit: DescriptorLoader.maximumFileSize)
                    // The file read, by its descriptor's status: not what the
                    // path names a moment after a check.
                    if refusingForeignFiles, let problem = FileSystem.foreignWriteProblem(at: file.path, opened: info) {
                        add(
                            stem, file.path,
                            .failure(FileIssueBox(issue: FileIssue(file: file.path, field: "", problem: problem))))
                        continue
                    }
                    add(stem, file.path, .success(data))
                } catch {
                    add(
                        stem, file.path,
                        .failure(FileIssueBox(issue: FileIssue(file: file.path, field: "", problem: error.description)))
                    )
                }
            }
        }
        self.sources = sources
        self.unreadDirectories = unread
    }

    /// Directories given that exist but could not be listed (a file in the
    /// directory's place, no permission): every provider file in them is
    /// missed, and the bundled ones they override are used instead.
    package let unreadDirectories: [FileIssue]

    /// The entry for `id`, decoding its files on first use.
    package func entry(id: String) -> Entry? {
        if case .entry(let entry)? = resolve(id) { return entry }
        return nil
    }

    /// Decodes `stem`'s files in load order, as if each replaced the one
    /// before: a later file that fails hides the earlier ones (its problems
    /// are reported, not the bundled file the user meant to replace). A file
    /// that loads is compared with the first that did (the bundled one, when
    /// there is one): against the one just before, an override behind a
    /// broken file, or behind another override, sent elsewhere unannounced.
    private func resolve(_ stem: String) -> Resolution? {
        if let known = cache.resolutions.withLock({ $0[stem] }) { return known }
        // `gitHub.json` holding `"id": "github"` is refused for its name, and
        // `github` went on as the bundled file, silently, though the file was
        // plainly meant to replace it (on macOS, `gitHub.json` is what the
        // file system shows for a `github.json` saved under that name).
        let variants = sources.keys.filter { $0 != stem && $0.lowercased() == stem }.sorted()
        if !variants.isEmpty, DescriptorValidator.isValidName(stem) {
            let issues = variants.flatMap { variant in
                (sources[variant] ?? []).map { source in
                    FileIssue(
                        file: source.path, field: "",
                        problem: """
                            is named '\(variant).json', which differs from '\(stem).json' only in case: a provider's file is named \
                            its id exactly, so this one replaces nothing, and '\(stem)' is not used while it is there. \
                            Rename it to \(stem).json, or remove it.
                            """)
                }
            }
            cache.resolutions.withLock { $0[stem] = .problems(issues) }
            return .problems(issues)
        }
        guard let layers = sources[stem] else { return nil }
        let loader = DescriptorLoader()
        var result: Resolution?
        var original: ProviderDescriptor?
        var previous: ProviderDescriptor?
        var passedOver: [FileIssue] = []
        for source in layers {
            let outcome = load(source, stem: stem, loader: loader)
            switch outcome {
            case .entry(let descriptor):
                result = .entry(
                    Entry(descriptor: descriptor, replaced: previous, original: original, passedOver: passedOver))
                if original == nil { original = descriptor }
                previous = descriptor
                passedOver = []
            case .problems(let issues):
                result = .problems(issues)
                passedOver += issues
            }
        }
        if let result { cache.resolutions.withLock { $0[stem] = result } }
        return result
    }

    private enum Outcome {
        case entry(ProviderDescriptor)
        case problems([FileIssue])
    }

    private func load(_ source: Source, stem: String, loader: DescriptorLoader) -> Outcome {
        do {
            let descriptor = try loader.decode(try source.contents.get(), file: source.path)
            // A stray notes.json must not silently become `github`.
            guard descriptor.id == stem else {
                return .problems([Self.nameMismatch(file: source.path, id: descriptor.id)])
            }
            if let clash = environmentClash(descriptor, order: source.order) { return .problems([clash]) }
            return .entry(descriptor)
        } catch let box as FileIssueBox {
            return .problems([box.issue])
        } catch let error as AuthKitError where error.code == .invalidFile {
            guard case .invalidFile(let issues) = error.reason else { return .problems([]) }
            return .problems(issues)
        } catch {
            return .problems([FileIssue(file: source.path, field: "", problem: "\(error)")])
        }
    }

    /// A descriptor's file must be named after its id.
    package static func nameMismatch(file: String, id: String) -> FileIssue {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        return FileIssue(
            file: file, field: "id",
            problem:
                "is '\(id)', but the file is named '\(name)'; a descriptor's file name must be its id: rename the file to \(id).json, or change the id."
        )
    }

    /// A setting of `descriptor` read from an environment variable another
    /// provider (with a different id) loaded before it reads too: `my-gitlab`
    /// and `my_gitlab` both read AUTHKIT_MY_GITLAB_CLIENT_ID. Neither may be
    /// read as the other's, so the later file is refused. The others are read
    /// only as far as their id and placeholder names (``sketch(_:stem:)``), so this
    /// check does not decode the catalogue.
    ///
    /// Only files that could be providers count: named after a valid id,
    /// holding that id. A copy beside an override (`qiita copy.json`, or
    /// `old-qiita.json` still holding `"id": "qiita"`), itself refused for
    /// its name, made `qiita` unusable, with advice to rename qiita's id.
    /// (A name that differs from an id only in case hides that provider on
    /// purpose: ``resolve(_:)``.)
    private func environmentClash(_ descriptor: ProviderDescriptor, order: Int) -> FileIssue? {
        let mine = Set(ClientSettings.environmentVariables(for: descriptor))
        for (id, layers) in sources.sorted(by: { $0.key < $1.key })
        where id != descriptor.id && DescriptorValidator.isValidName(id) {
            // That provider as it stood when this file was read: its last file before this one.
            guard let earlier = layers.last(where: { $0.order < order }), let theirs = sketch(earlier, stem: id) else {
                continue
            }
            if let shared = mine.intersection(theirs).sorted().first {
                return Self.clash(descriptor.source, variable: shared, id: id, path: earlier.path)
            }
        }
        return nil
    }

    /// The same check for a file not yet in the catalogue (`providers add`
    /// writing one, `providers validate`), against every provider of
    /// another id in it, bundled or not, whichever file would be read
    /// first: `providers add my-idp` beside `my_idp.json` reported success,
    /// and the catalogue then refused `my_idp`, the provider the user
    /// already had (`-` sorts first).
    package func environmentClash(id newID: String, placeholderNames: [String], file: String) -> FileIssue? {
        let mine = Set(ClientSettings.environmentVariables(providerID: newID, placeholderNames: placeholderNames))
        for (id, layers) in sources.sorted(by: { $0.key < $1.key })
        where id != newID && DescriptorValidator.isValidName(id) {
            for layer in layers.reversed() {
                if let theirs = sketch(layer, stem: id), let shared = mine.intersection(theirs).sorted().first {
                    return Self.clash(file, variable: shared, id: id, path: layer.path)
                }
            }
        }
        return nil
    }

    private static func clash(_ file: String, variable: String, id: String, path: String) -> FileIssue {
        FileIssue(
            file: file, field: "id",
            problem:
                "its settings would be read from \(variable), which provider '\(id)' (\(path)) reads too; rename this provider's id or placeholder so that no variable names two providers."
        )
    }

    /// The environment variables a file's provider reads, from its `id` and
    /// `placeholders` alone; `nil` when the file is not JSON with an id, or
    /// its id is not `stem` (such a file is refused, no provider).
    /// A bundled file's are known from its outline: parsing all of them was
    /// a fiftieth of a sign-in.
    private func sketch(_ source: Source, stem: String) -> [String]? {
        if let outline = source.outline {
            return ClientSettings.environmentVariables(providerID: outline.id, placeholderNames: outline.placeholders)
        }
        if let known = cache.sketches.withLock({ $0[source.order] }) { return known }
        var variables: [String]?
        if case .success(let data) = source.contents, case .object(let object)? = try? JSONValue(parsing: data),
            case .string(let id)? = object["id"], id == stem
        {
            var names = [String]()
            if case .object(let placeholders)? = object["placeholders"] { names = Array(placeholders.keys) }
            variables = ClientSettings.environmentVariables(providerID: id, placeholderNames: names)
        }
        cache.sketches.withLock { $0[source.order] = .some(variables) }
        return variables
    }

    private static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(".json") ? String(name.dropLast(5)) : name
    }

    /// The bundled descriptors (or `$AUTHKIT_BUNDLED_PROVIDERS`), then
    /// `$AUTHKIT_HOME/providers`, then `additional`. A file there that
    /// another user could have written, or in a directory they could write
    /// to, is refused with the `chmod` that fixes it: it would decide where
    /// sign-ins, codes and client secrets are sent.
    public static func standard(
        additional: [URL] = [], environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProviderCatalog {
        var directories = [URL]()
        let override = bundledDirectoryOverride(environment: environment)
        if let override { directories.append(override) }
        directories.append(
            AuthKitHome.directory(environment: environment).appendingPathComponent("providers", isDirectory: true))
        directories += additional
        return ProviderCatalog(includeBundled: override == nil, directories: directories, refusingForeignFiles: true)
    }

    /// All loaded ids, sorted (every file is decoded to know which load).
    public var ids: [String] { entries.keys.sorted() }

    /// The descriptor for `id`.
    /// - Throws: ``AuthKitError/Code/invalidFile`` if that provider's file is
    ///   broken, else ``AuthKitError/Code/unknownProvider`` with the nearest ids.
    public func descriptor(id: String) throws -> ProviderDescriptor {
        switch resolve(id) {
        case .entry(let entry)?: return entry.descriptor
        case .problems(let issues)?: throw AuthKitError.invalidFile(issues)
        case nil: throw AuthKitError.unknownProvider(id: id, suggestions: suggestions(for: id))
        }
    }

    /// What a program loading the user's files should tell its user about
    /// the file that provides `id`, in sentences: files of that id passed
    /// over because they failed to load, and what the file changes against
    /// the first one of its id (the bundled one, when there is one) where
    /// that moves a sign-in or weakens it: hosts it sends to that the
    /// first did not, a protection it turns off (PKCE, the issuer and its
    /// `iss` check, ID token verification, DPoP, a loopback redirect), the
    /// token endpoint moved, API or git origins its credentials may now go
    /// to. Empty for a provider nothing replaced, or an override that
    /// changes none of these.
    ///
    /// A file someone else placed in `$AUTHKIT_HOME/providers` must not
    /// redirect or weaken a sign-in silently: ``standard(additional:environment:)``
    /// refuses one another user could write, and `authkit` prints these on
    /// standard error before it uses the provider. An app that loads the
    /// user's files should show or log them as well.
    public func overrideNotes(for id: String) -> [String] {
        guard case .entry(let entry)? = resolve(id) else { return [] }
        var notes = entry.passedOver.map { "\($0) (passed over: a later file of '\(id)' is used)" }
        guard let original = entry.original else { return notes }
        let replacing = "'\(id)' comes from \(entry.file), which replaces \(original.source) and"
        if !entry.newHosts.isEmpty {
            let hosts = entry.newHosts.map { DisplayText.sanitized($0) }.joined(separator: ", ")
            let before = original.defaultedEndpointHosts.sorted().joined(separator: ", ")
            notes.append("\(replacing) sends to \(hosts) instead of \(before).")
        }
        if !entry.weakenedProtections.isEmpty {
            notes.append("\(replacing) \(entry.weakenedProtections.joined(separator: ", ")).")
        }
        if let added = entry.addedAPIOrigins {
            let shown =
                added.isEmpty
                ? "any origin (it lists no api.origins)"
                : added.map { DisplayText.sanitized($0, limit: 120) }.joined(separator: ", ")
            notes.append(
                "\(replacing) lets credentials go to \(shown) as well as \(original.apiOrigins.patterns.joined(separator: ", "))."
            )
        }
        if let added = entry.addedGitOrigins {
            let shown = added.map { DisplayText.sanitized($0, limit: 120) }.joined(separator: ", ")
            let before = original.git.map { " as well as " + $0.origins.patterns.joined(separator: ", ") } ?? ""
            notes.append("\(replacing) gives git the token at \(shown)\(before).")
        }
        // Paths and origins from files (a directory the caller added) are
        // shown as text too: no terminal escape reaches where they are printed.
        return notes.map { DisplayText.sanitized($0, limit: 2_000) }
    }

    /// Known ids within a small edit distance of `id`, nearest first.
    package func suggestions(for id: String) -> [String] {
        let scored = ids.map { ($0, Self.editDistance(id.lowercased(), $0)) }
        let limit = max(2, id.count / 3)
        return scored.filter { $0.1 <= limit || $0.0.hasPrefix(id.lowercased()) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
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
        BundledDescriptors.files.map { (bundledPath($0.name), Data($0.json.utf8)) }
    }

    /// The bundled file of provider `id`, if one ships.
    package static func bundledFile(id: String) -> (path: String, data: Data)? {
        BundledDescriptors.files.first { $0.name == "\(id).json" }.map { (bundledPath($0.name), Data($0.json.utf8)) }
    }

    /// How a bundled file is named in messages: `(bundled) providers/github.json`.
    private static func bundledPath(_ name: String) -> String { "(bundled) providers/\(name)" }

    /// `$AUTHKIT_BUNDLED_PROVIDERS`: a directory that replaces the compiled-in
    /// descriptors, for packagers who install the files under `share/` and for tests.
    package static func bundledDirectoryOverride(environment: [String: String]) -> URL? {
        guard let path = environment["AUTHKIT_BUNDLED_PROVIDERS"], !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}
