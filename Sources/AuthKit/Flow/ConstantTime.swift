/// Comparison that takes the same time wherever two strings first differ, so
/// response timing does not reveal how much of a guessed `state` was right
/// (RFC 6749 §10.12 asks that `state` be unguessable; a timing oracle would
/// let an attacker guess it byte by byte).
package enum ConstantTime {
    package static func equals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        // Length is not secret: every state AuthKit issues has the same length.
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
