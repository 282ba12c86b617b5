import AuthKit
import Crypto
import Foundation

/// How AuthKitPostgres keeps tokens at rest: AES-256-GCM under the
/// application's keys (swift-crypto), each sealed value tagged with the id
/// of the key that sealed it, so keys can rotate: values are sealed with the
/// first key, opened with whichever their id names, and sealed again with
/// the first key the next time they are saved.
///
/// Each value is bound to its row (the associated data names the table and
/// the key: a credential's provider and label), so a sealed value copied
/// into another row does not open there. A database dump without the keys
/// holds no usable token, code verifier or session.
package struct TokenEncryption: Sendable {
    /// The id new values are sealed under.
    package let currentKeyID: String
    private let keys: [String: SymmetricKey]

    /// - Parameter keys: `(id, key)` pairs, the one to seal with first;
    ///   every key 256 bits. Keep retired keys until every row sealed with
    ///   them has been saved again.
    package init(keys: [(id: String, key: SymmetricKey)]) throws {
        guard let first = keys.first else { throw AuthKitError.encryption(.noKey) }
        for (id, key) in keys {
            // The id first: with id and key swapped (`BASE64:k1`), the
            // size error named the key as the id, and a log kept it.
            // ASCII only: Swift compares `é` and `e` + U+0301 as one id, the
            // database (`key_id <> current`) as two, and two instances given
            // the two spellings resealed each other's rows for ever.
            guard !id.isEmpty, id.utf8.count <= 64,
                id.unicodeScalars.allSatisfy({
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
                })
            else { throw AuthKitError.encryption(.invalidKeyID(id)) }
            guard key.bitCount == 256 else { throw AuthKitError.encryption(.wrongKeySize(id: id, bits: key.bitCount)) }
        }
        // Two keys under one id: every row sealed with the one dropped would
        // read as altered, with nothing saying why.
        var seen = Set<String>()
        for (id, _) in keys where !seen.insert(id).inserted { throw AuthKitError.encryption(.repeatedKeyID(id)) }
        self.currentKeyID = first.id
        self.keys = Dictionary(keys.map { ($0.id, $0.key) }, uniquingKeysWith: { first, _ in first })
    }

    /// Keys written as text, `id:BASE64[,id:BASE64…]` (32 bytes each, the
    /// first current): how an app takes them from its environment.
    package init(text: String) throws {
        var keys = [(id: String, key: SymmetricKey)]()
        // A key file read whole ends in a newline; spaces around a comma are a way of writing a list.
        for part in text.split(separator: ",") {
            let pieces = part.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", maxSplits: 1)
            guard pieces.count == 2, let bytes = Data(base64Encoded: String(pieces[1])) else {
                throw AuthKitError.encryption(.unreadable)
            }
            keys.append((String(pieces[0]), SymmetricKey(data: bytes)))
        }
        try self.init(keys: keys)
    }

    /// A new random key, as `id:BASE64`, for `init(text:)`.
    package static func newKeyText(id: String) -> String {
        id + ":" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    func seal(_ plaintext: Data, binding: String) throws -> (keyID: String, sealed: Data) {
        let box = try AES.GCM.seal(plaintext, using: keys[currentKeyID]!, authenticating: Data(binding.utf8))
        return (currentKeyID, box.combined!)
    }

    /// Whether a row sealed under `id` opens here.
    func holds(_ id: String) -> Bool { keys[id] != nil }

    /// The ids of the keys a rotation retires: every one but the current.
    var olderKeyIDs: [String] { keys.keys.filter { $0 != currentKeyID }.sorted() }

    /// `sealed` opened and sealed under the current key, its plaintext
    /// handed over as it is (never decoded: a value a newer build wrote
    /// stays whole).
    func resealed(_ sealed: Data, keyID: String, binding: String) throws -> Data {
        try seal(try open(sealed, keyID: keyID, binding: binding), binding: binding).sealed
    }

    func open(_ sealed: Data, keyID: String, binding: String) throws -> Data {
        guard let key = keys[keyID] else { throw AuthKitError.encryption(.unknownKey(id: keyID)) }
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(binding.utf8))
        } catch {
            throw AuthKitError.encryption(.cannotOpen(id: keyID))
        }
    }
}
