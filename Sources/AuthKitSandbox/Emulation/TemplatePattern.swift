import AuthKit

/// Descriptor template text (`/api/v2/access_tokens/{access_token}`,
/// `Bearer {access_token}`) read backwards: does a value the client sent fit
/// the template, and what did it put in each `{variable}`?
///
/// The client renders templates one way (``TemplateVariables`` in the core);
/// the sandbox must recognise the result without sharing that code, or a bug
/// in rendering would be mirrored instead of caught.
struct TemplatePattern: Sendable, Hashable {
    enum Piece: Sendable, Hashable {
        case literal(String)
        case variable(String)
    }

    let pieces: [Piece]

    init(_ template: String) {
        var pieces = [Piece]()
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            if open > rest.startIndex { pieces.append(.literal(String(rest[..<open]))) }
            pieces.append(.variable(String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        self.pieces = pieces
    }

    var variables: [String] {
        pieces.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// The value of each variable when `text` fits, else `nil`. A variable
    /// takes at least one character; with `decodingPercent`, captured text is
    /// percent-decoded (values in a URL path are encoded by the client). A
    /// value may span segments (GitLab's `{host}` holds a path when GitLab
    /// runs under one).
    ///
    /// Each (piece, position) is decided once: tried afresh, a 75 KB path
    /// of repeated literals had two variables try every split of it, for
    /// half a minute on the server's only thread (paths are also capped at
    /// 8 KiB before routing).
    func match(_ text: String, decodingPercent: Bool = false) -> [String: String]? {
        let characters = Array(text)
        var failed = Set<Int>()
        var captures = [String: String]()
        func match(_ piece: Int, _ at: Int) -> Bool {
            let key = piece * (characters.count + 1) + at
            if failed.contains(key) { return false }
            guard piece < pieces.count else { return at == characters.count }
            var fits = false
            switch pieces[piece] {
            case .literal(let literal):
                let expected = Array(literal)
                fits =
                    at + expected.count <= characters.count
                    && characters[at..<(at + expected.count)].elementsEqual(expected)
                    && match(piece + 1, at + expected.count)
            case .variable(let name):
                if piece + 1 == pieces.count {
                    // Last piece: the variable takes everything that is left.
                    fits = at < characters.count
                    if fits { captures[name] = String(characters[at...]) }
                } else if case .literal = pieces[piece + 1] {
                    // Shortest capture first, as a client's value is usually short.
                    var end = at + 1
                    while !fits, end <= characters.count {
                        if match(piece + 1, end) {
                            captures[name] = String(characters[at..<end])
                            fits = true
                        }
                        end += 1
                    }
                } // two variables in a row, which no descriptor writes: no match
            }
            if !fits { failed.insert(key) }
            return fits
        }
        guard match(0, 0) else { return nil }
        if decodingPercent {
            for (name, value) in captures {
                guard let decoded = PercentEncoding.decode(value) else { return nil }
                captures[name] = decoded
            }
        }
        return captures
    }
}
