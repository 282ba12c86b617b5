/// What AuthKit used Foundation's `CharacterSet` for, on the standard
/// library alone (FoundationEssentials, which AuthKit imports on Linux, has no
/// `CharacterSet`). The whitespace classes match Foundation's on Linux
/// exactly; the other two follow the Unicode general categories as the
/// standard library knows them, where Foundation's tables on Linux lag (they
/// lack Tangut and the letters of Unicode 15.1 and later, and count unassigned
/// scalars of plane 14 as control characters). PlatformTests holds both to that.
extension Unicode.Scalar {
    /// `CharacterSet.whitespaces`: Unicode general category Zs, tab, and (as
    /// Foundation on Linux has it) U+200B ZERO WIDTH SPACE, so one pasted
    /// with a URL or a code is trimmed too.
    package var isSpace: Bool {
        // ASCII first (every header line and form value): only space and tab,
        // without the general-category lookup, which showed in profiles.
        if value < 0x80 { return value == 0x20 || value == 0x09 }
        return self == "\u{200B}" || properties.generalCategory == .spaceSeparator
    }

    /// `CharacterSet.whitespacesAndNewlines`: the above, and U+000A–U+000D, U+0085, U+2028, U+2029.
    package var isSpaceOrNewline: Bool {
        isSpace || ("\n"..."\r").contains(self) || self == "\u{85}" || self == "\u{2028}" || self == "\u{2029}"
    }

    /// `CharacterSet.alphanumerics`: general categories L*, M* and N*.
    /// Only lock files' names derive from it (``FileCredentialStore``), so
    /// where Foundation's older table differs nothing stored is affected.
    package var isAlphanumeric: Bool {
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark,
            .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// `CharacterSet.controlCharacters`: general categories Cc and Cf.
    package var isControl: Bool {
        let category = properties.generalCategory
        return category == .control || category == .format
    }
}

extension StringProtocol {
    /// `trimmingCharacters(in: .whitespaces)`.
    package func trimmingSpaces() -> String { trimming { $0.isSpace } }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    package func trimmingSpacesAndNewlines() -> String { trimming { $0.isSpaceOrNewline } }

    /// `trimmingSpaces()` as a slice of `self`: nothing allocated, for a
    /// check that only reads the trimmed text (a header's `Content-Length`).
    package func slicedTrimmingSpaces() -> SubSequence { self[trimmedBounds { $0.isSpace }] }

    /// The bounds found on `self`, then one string made of what is between
    /// them: a slice made a string first, and then its trimmed part another,
    /// was two allocations for every header value (counted per request).
    private func trimming(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let bounds = trimmedBounds(drop)
        return bounds == startIndex..<endIndex ? String(self) : String(self[bounds])
    }

    /// Where `self` starts and ends once the scalars `drop` names are left
    /// off both ends (an empty range when nothing else is there).
    private func trimmedBounds(_ drop: (Unicode.Scalar) -> Bool) -> Range<Index> {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return endIndex..<endIndex }
        return first..<scalars.index(after: scalars.lastIndex(where: { !drop($0) })!)
    }
}
