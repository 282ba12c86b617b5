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
    /// takes at least one character; with `decodingPercent` (a URL path),
    /// captured text is percent-decoded (values in a path are encoded by the
    /// client) and stays within one segment: a value's `/` is sent as `%2F`.
    /// That also bounds the search: a 75 KB path of repeated literals made
    /// it try every split of the path for each variable, for half a minute,
    /// on the server's only thread.
    func match(_ text: String, decodingPercent: Bool = false) -> [String: String]? {
        var captures = [String: String]()
        guard match(pieces[...], Substring(text), withinSegment: decodingPercent, &captures) else { return nil }
        if decodingPercent {
            for (name, value) in captures {
                guard let decoded = PercentEncoding.decode(value) else { return nil }
                captures[name] = decoded
            }
        }
        return captures
    }

    private func match(
        _ pieces: ArraySlice<Piece>, _ text: Substring, withinSegment: Bool, _ captures: inout [String: String]
    ) -> Bool {
        guard let first = pieces.first else { return text.isEmpty }
        let rest = pieces.dropFirst()
        switch first {
        case .literal(let literal):
            guard text.hasPrefix(literal) else { return false }
            return match(rest, text.dropFirst(literal.count), withinSegment: withinSegment, &captures)
        case .variable(let name):
            guard !text.isEmpty else { return false }
            // Where a capture must end: the segment's end, in a path.
            let segmentEnd = withinSegment ? text.firstIndex(of: "/") ?? text.endIndex : text.endIndex
            guard case .literal(let next)? = rest.first else {
                // Last piece (or two variables in a row, which no descriptor
                // writes): the variable takes everything that is left.
                guard rest.isEmpty, segmentEnd == text.endIndex else { return false }
                captures[name] = String(text)
                return true
            }
            // Try each place the next literal occurs, shortest capture first.
            var searchStart = text.index(after: text.startIndex)
            while searchStart <= text.endIndex, let found = text[searchStart...].firstRange(of: next),
                found.lowerBound <= segmentEnd
            {
                var attempt = captures
                attempt[name] = String(text[..<found.lowerBound])
                if match(rest, text[found.lowerBound...], withinSegment: withinSegment, &attempt) {
                    captures = attempt
                    return true
                }
                guard found.lowerBound < text.endIndex else { break }
                searchStart = text.index(after: found.lowerBound)
            }
            return false
        }
    }
}
