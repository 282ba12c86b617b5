extension AuthKitError {
    /// Why the PostgreSQL store's encryption keys cannot be used (AuthKitPostgres), or a stored value not opened.
    package enum EncryptionProblem: Sendable, Hashable, CustomStringConvertible {
        case noKey
        case wrongKeySize(id: String, bits: Int)
        case invalidKeyID(String)
        case unreadable
        /// Two keys were given the same id.
        case repeatedKeyID(String)
        /// A row sealed under a key id this process was not given.
        case unknownKey(id: String)
        /// The value does not open with its key: altered, moved from another
        /// row, or a different key under the same id.
        case cannotOpen(id: String)

        package var description: String {
            switch self {
            case .noKey: "No encryption key was given; tokens are never stored in the clear."
            // A long id may be a key given in its place (unpadded base64url
            // passes as an id): named only when short, as ids are.
            case .wrongKeySize(let id, let bits):
                "The key \(id.count <= 16 ? "'\(id)'" : "whose id is \(id.count) characters long") has \(bits) bits; AES-256-GCM takes 256."
            // Not repeated: what fails as an id may be a key given in its place.
            case .invalidKeyID(let id):
                "A key id (\(id.count) characters) is not 1–64 ASCII letters, digits, '-' or '_'; keys are written id:BASE64, the id first."
            case .unreadable: "The keys are not written as id:BASE64[,id:BASE64…]."
            case .repeatedKeyID(let id):
                "Two keys have the id '\(String(id.prefix(64)))'; give each key its own id (a row records the id it was sealed under)."
            // An id read from a row: whoever could write the row chose it (a
            // line break in it forged a log line), so shown sanitized and short.
            case .unknownKey(let id):
                "A stored value is sealed under the key '\(DisplayText.sanitized(id, limit: 64))', which this process was not given; add it (after the current key)."
            case .cannotOpen(let id):
                "A stored value does not open with the key '\(DisplayText.sanitized(id, limit: 64))': it was altered or moved, or the key is not the one it was sealed with."
            }
        }
    }
}
