/// How much a credential keeps of what a provider sent beside its tokens:
/// the members of a token answer (``Credential/rawFields``) and the claims
/// of a verified ID token (``Identity/claims``).
///
/// RFC 6749 §5.1 has a client ignore the members it does not understand;
/// AuthKit keeps them for the caller (an account id, a team), and kept
/// whole they were a way to break the store. An answer may be 1 MiB
/// (``RequestPolicy/tokenEndpoint``) and nest 128 deep
/// (``JSONParser/maximumDepth``); a credential sits 3 levels deep in the
/// credentials file and its claims 5, so a member nested 125 deep made the
/// whole file unreadable, and 1 MiB of nested arrays took 87 MB once
/// pretty-printed, past the file's 64 MiB cap. One hostile or compromised
/// provider thereby cost every other account in the file.
///
/// So a member nested deeper than ``deepestNesting``, or taking more than
/// ``largestMember`` in the file, is dropped, and so are members past
/// ``largestTotal`` in all (the smallest kept first, those AuthKit reads
/// before any). The caller logs what was dropped, by name, never its value.
package enum KeptMembers {
    /// The deepest a kept member's value nests (`"a"` 0, `["a"]` 1): real
    /// answers and claims nest two or three (Slack's `authed_user`,
    /// Keycloak's `resource_access.<client>.roles`).
    package static let deepestNesting = 8
    /// The most one kept member takes in the credentials file, in bytes
    /// (about: ``storedSize(of:named:level:)``). An ID token is a few KiB.
    package static let largestMember = 64 << 10
    /// The most all kept members of one answer (or one ID token's claims) take.
    package static let largestTotal = 256 << 10

    /// Members kept whole when they are strings, whatever their size, and
    /// not counted in ``largestTotal``: `id_token`, which AuthKit verifies
    /// and sends whole (OpenID Connect Core §3.1.3.7; a sign-out's
    /// `id_token_hint`), as it keeps the access token whole in its own
    /// field. Cut, a large one read as "no ID token"; as a string it nests
    /// no deeper than the answer, and the claims it holds are bounded when
    /// verified.
    package static let wholeStrings: Set<String> = ["id_token"]

    /// A member left out, and why, in words that name no value.
    package struct Dropped: Sendable, Hashable {
        package var name: String
        package var reason: String
    }

    /// `members` within the bounds above, and what was left out (in name order).
    /// - Parameters:
    ///   - preferred: names kept before any other when the total is reached
    ///     (those AuthKit itself reads, such as `id_token`).
    ///   - level: how deep in the credentials file a member is written
    ///     (4 for a token answer's, 5 for a claim), for the indentation
    ///     pretty-printing adds.
    package static func bounded(_ members: [String: JSONValue], preferring preferred: Set<String> = [], level: Int)
        -> (kept: [String: JSONValue], dropped: [Dropped])
    {
        // Fast path: every token answer passes here, and almost every one is
        // a few scalars. A bound taken from the UTF-8 counts alone (each byte
        // escaped at most six-fold, `\u00XX`) under ``largestMember`` for
        // all of them together keeps each member and the total within the
        // bounds, with no walk through the strings (a few per cent of a
        // code exchange's library work in a profile; the session that added
        // the bounds measured that work 27 % slower in all, not this alone).
        var scalarBound = 0
        for (name, value) in members {
            let valueBound: Int
            switch value {
            case .null, .bool, .integer, .number: valueBound = 32
            case .string(let text): valueBound = 6 * text.utf8.count + 2
            case .array, .object: valueBound = largestMember
            }
            scalarBound += 2 * level + 6 * name.utf8.count + 8 + valueBound
            if scalarBound > largestMember { break }
        }
        if scalarBound <= largestMember { return (members, []) }

        var dropped = [Dropped]()
        var candidates = [(name: String, value: JSONValue, size: Int)]()
        for (name, value) in members {
            if wholeStrings.contains(name), case .string = value { continue }
            let (size, problem) = measured(value, named: name, level: level)
            if let problem {
                dropped.append(Dropped(name: name, reason: problem))
            } else {
                candidates.append((name, value, size))
            }
        }
        // Fast path: almost every answer is a few hundred bytes.
        let total = candidates.reduce(0) { $0 + $1.size }
        if total <= largestTotal, dropped.isEmpty { return (members, []) }
        var kept = members.filter { wholeStrings.contains($0.key) && $0.value.isString }
        if total <= largestTotal {
            for candidate in candidates { kept[candidate.name] = candidate.value }
        } else {
            candidates.sort { a, b in
                let (aFirst, bFirst) = (preferred.contains(a.name), preferred.contains(b.name))
                if aFirst != bFirst { return aFirst }
                return a.size != b.size ? a.size < b.size : a.name < b.name
            }
            var used = 0
            for candidate in candidates {
                if used + candidate.size <= largestTotal {
                    kept[candidate.name] = candidate.value
                    used += candidate.size
                } else {
                    dropped.append(
                        Dropped(
                            name: candidate.name,
                            reason: "the members kept before it take all of the \(largestTotal >> 10) KiB kept in all"))
                }
            }
        }
        return (kept, dropped.sorted { $0.name < $1.name })
    }

    /// What `"name" : value` takes in the file (``storedSize(of:named:level:)``),
    /// and why it is not kept on its own (too deep, too large), or `nil`.
    private static func measured(_ value: JSONValue, named name: String, level: Int) -> (size: Int, problem: String?) {
        let depth = nesting(of: value)
        if depth > deepestNesting {
            return (0, "it nests \(depth) levels deep, more than the \(deepestNesting) kept")
        }
        let size = storedSize(of: value, named: name, level: level)
        if size > largestMember {
            return (
                size,
                "it takes about \((size + 1023) >> 10) KiB, more than the \(largestMember >> 10) KiB kept of one member"
            )
        }
        return (size, nil)
    }

    /// How deep `value` nests: 0 for a scalar, 1 for `[]` or `{"a": 1}`.
    static func nesting(of value: JSONValue) -> Int {
        switch value {
        case .array(let elements): return 1 + elements.reduce(0) { max($0, nesting(of: $1)) }
        case .object(let members): return 1 + members.values.reduce(0) { max($0, nesting(of: $1)) }
        default: return 0
        }
    }

    /// About the bytes `"name" : value` takes in the credentials file,
    /// which ``JSONEncoder/credentials`` pretty-prints: each element on a
    /// line of its own, indented two spaces a level, `/` escaped. An upper
    /// bound within a few bytes an element; the store checks what it
    /// writes itself (``FileCredentialStore``).
    static func storedSize(of value: JSONValue, named name: String, level: Int) -> Int {
        // The line: indentation, the name, " : ", the value, ",\n".
        2 * level + stringSize(name) + 3 + size(of: value, level: level) + 2
    }

    private static func size(of value: JSONValue, level: Int) -> Int {
        switch value {
        case .null: return 4
        case .bool(let value): return value ? 4 : 5
        case .integer: return 20
        case .number: return 24
        case .string(let text): return stringSize(text)
        case .array(let elements):
            // "[\n", each element on its line, the closing line's indentation and "]".
            return 2 + 2 * level + 1
                + elements.reduce(0) { $0 + 2 * (level + 1) + size(of: $1, level: level + 1) + 2 }
        case .object(let members):
            return 2 + 2 * level + 1
                + members.reduce(0) { $0 + storedSize(of: $1.value, named: $1.key, level: level + 1) }
        }
    }

    /// A JSON string's bytes, quotes and escapes included (a control
    /// character counted as `\u00XX`, the longest escape).
    private static func stringSize(_ text: String) -> Int {
        var size = 2
        for byte in text.utf8 {
            switch byte {
            case 0x00..<0x20: size += 6
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): size += 2
            default: size += 1
            }
        }
        return size
    }
}

extension JSONValue {
    fileprivate var isString: Bool {
        if case .string = self { return true }
        return false
    }
}
