#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The on-disk document of ``FileCredentialStore``: a version and a list.
///
/// A list rather than a dictionary so the JSON reads naturally and keys with
/// `nil` labels need no encoding trick; the version lets a later format migrate.
///
/// **Members this version does not know are kept.** A later AuthKit that adds
/// an optional member (one an older version may ignore, so the version stays
/// 1) must not lose it because an older `authkit` on the same machine saved
/// another account: the file's own unknown members, and each credential's
/// object whole (members nested in its identity or key included), are
/// written back as they were read. A credential that is replaced (a new
/// sign-in, a refresh's renewal) is replaced whole, its unknown members with
/// it: what they said was about the token that is gone. A change that an
/// older version must not ignore raises ``currentVersion`` instead, and then
/// an older version refuses the file without writing it.
///
/// They are kept as JSON values (``JSONValue``), as the members of a token
/// answer are: what `JSONEncoder` writes comes back the same, but a number
/// is kept as a value, not as its text: `1.0` is written back as `1`, and an
/// integer past 64 bits as the nearest `Double`.
struct CredentialFile: Codable, Sendable {
    static let currentVersion = 1

    var version: Int
    var entries: [Entry]
    /// Top-level members other than `version` and `credentials`.
    var otherMembers: [String: JSONValue]

    /// One stored credential and the members of its object this version does not know.
    struct Entry: Codable, Sendable {
        // Not `var`: an entry changed in place would still be written as it
        // was read (``asRead``). A changed credential is a new entry.
        let credential: Credential
        let otherMembers: [String: JSONValue]
        /// The entry's object as it was read, written back as it was while the
        /// credential is not replaced: a later AuthKit's member may be nested
        /// (inside `identity`, `dpopKey`), where re-encoding the
        /// ``Credential`` would drop it at every save of another account.
        private let asRead: JSONValue?

        init(_ credential: Credential, otherMembers: [String: JSONValue] = [:]) {
            self.credential = credential
            self.otherMembers = otherMembers
            asRead = nil
        }

        init(from decoder: any Decoder) throws {
            credential = try Credential(from: decoder)
            let container = try decoder.container(keyedBy: MemberName.self)
            var members = [String: JSONValue]()
            for key in container.allKeys {
                members[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
            }
            otherMembers = members.filter { !Credential.memberNames.contains($0.key) }
            asRead = .object(members)
        }

        /// The members of the entry as read that this version does not know,
        /// by their path: its own (``otherMembers``), and those nested in a
        /// member it knows (`identity.verifiedAt`), which the ``Credential``
        /// this version makes of it would not carry. A move to another store
        /// (`token move`) writes that credential, and would drop them.
        /// A `null` is no member lost (this version writes no `nil`).
        var unknownMemberPaths: [String] {
            var paths = Array(otherMembers.keys)
            guard case .object(let read)? = asRead,
                let encoded = try? JSONEncoder.credentials.encode(credential),
                case .object(let written)? = try? JSONValue(parsing: encoded)
            else { return paths.sorted() }
            for (name, value) in read where Credential.memberNames.contains(name) {
                if let mine = written[name] { paths += Self.missing(from: value, in: mine, at: name) }
            }
            return paths.sorted()
        }

        /// The paths of `read`'s members that `written` lacks, below `path`.
        private static func missing(from read: JSONValue, in written: JSONValue, at path: String) -> [String] {
            switch (read, written) {
            case (.object(let read), .object(let written)):
                return read.flatMap { name, value -> [String] in
                    if case .null = value { return [] }
                    guard let mine = written[name] else { return ["\(path).\(name)"] }
                    return missing(from: value, in: mine, at: "\(path).\(name)")
                }
            case (.array(let read), .array(let written)) where read.count == written.count:
                return zip(read, written).enumerated().flatMap { index, pair in
                    missing(from: pair.0, in: pair.1, at: "\(path)[\(index)]")
                }
            default:
                return []
            }
        }

        func encode(to encoder: any Encoder) throws {
            if let asRead { return try asRead.encode(to: encoder) }
            try credential.encode(to: encoder)
            try MemberName.encode(otherMembers, to: encoder)
        }
    }

    init(entries: [Entry], otherMembers: [String: JSONValue] = [:]) {
        self.version = Self.currentVersion
        self.entries = entries.sorted { Self.order($0.credential, $1.credential) }
        self.otherMembers = otherMembers
    }

    var credentials: [Credential] { entries.map(\.credential) }

    static func order(_ a: Credential, _ b: Credential) -> Bool {
        (a.providerID, a.label ?? "") < (b.providerID, b.label ?? "")
    }

    private static let memberNames: Set<String> = ["version", "credentials"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MemberName.self)
        // Read as a JSON value: Foundation's decoder reports a number that is
        // no `Int` (`1.5`, `1e20`) as "not valid JSON", naming no field.
        guard case .integer(let number) = try container.decode(JSONValue.self, forKey: MemberName("version")),
            let version = Int(exactly: number)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: MemberName("version"), in: container,
                debugDescription: "is not a format version: a whole number, 1 for this AuthKit.")
        }
        self.version = version
        // A newer format is refused before its entries are read: their shape
        // may have changed with it, and an entry this version cannot decode
        // would call the file corrupt ("move it away"), which loses every
        // credential a newer AuthKit wrote; what to do is upgrade.
        guard version <= Self.currentVersion else { throw NewerVersion(version: version) }
        entries = try container.decode([Entry].self, forKey: MemberName("credentials"))
        otherMembers = try MemberName.others(in: decoder, known: Self.memberNames)
    }

    /// The file's format is newer than ``currentVersion``: thrown by the
    /// decoder before the entries are read, which the store reports as "upgrade".
    struct NewerVersion: Error {
        let version: Int
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberName.self)
        try container.encode(version, forKey: MemberName("version"))
        try container.encode(entries, forKey: MemberName("credentials"))
        try MemberName.encode(otherMembers, to: encoder)
    }
}

/// Any member name of a JSON object, for reading and writing the members
/// ``CredentialFile`` keeps without knowing them.
struct MemberName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    /// The members of the object `decoder` reads that are not in `known`.
    static func others(in decoder: any Decoder, known: Set<String>) throws -> [String: JSONValue] {
        let container = try decoder.container(keyedBy: MemberName.self)
        var others = [String: JSONValue]()
        for key in container.allKeys where !known.contains(key.stringValue) {
            others[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        return others
    }

    /// Writes `members` into the object `encoder` is writing, beside what is
    /// already there. A known name is never among them (``others(in:known:)``
    /// leaves those out), so nothing is written twice.
    static func encode(_ members: [String: JSONValue], to encoder: any Encoder) throws {
        guard !members.isEmpty else { return }
        var container = encoder.container(keyedBy: MemberName.self)
        for (name, value) in members {
            try container.encode(value, forKey: MemberName(name))
        }
    }
}
