// The harnesses' own checks, shared. Text search is byte by byte: Foundation's
// `String.contains(_:)` and `components(separatedBy:)` on arbitrary text
// trapped on NULs and U+FFFD (see BearerChallenge.swift): a check that
// crashes reports a finding in the harness, not in AuthKit.

/// Whether `text` holds `part`, compared as UTF-8 bytes.
func holds(_ text: String, _ part: String) -> Bool { occurrences(of: part, in: text, atMost: 1) > 0 }

/// How many times `part` occurs in `text` (overlaps counted), as UTF-8
/// bytes, counting no further than `limit`.
func occurrences(of part: String, in text: String, atMost limit: Int = .max) -> Int {
    let bytes = Array(text.utf8)
    let wanted = Array(part.utf8)
    guard !wanted.isEmpty, wanted.count <= bytes.count else { return 0 }
    var found = 0
    for start in 0...(bytes.count - wanted.count) where bytes[start..<(start + wanted.count)].elementsEqual(wanted) {
        found += 1
        if found >= limit { break }
    }
    return found
}

/// An error message reaches terminals and logs: none holds a control
/// character (C0, DEL, C1), with which a hostile answer would move the
/// cursor or rewrite the line, however hostile the input.
func requireNoControlCharacters(_ message: String) {
    precondition(
        !message.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) },
        "control character in the error: \(message.debugDescription)")
}
