import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The HMAC state for the last signing key, so the next request signed with
/// the same token does not redo the key setup (RFC 2104 §2: the key is padded
/// and hashed into the inner and outer states once per key).
///
/// Each request copies the prepared state and hashes only its base string.
/// One entry per signer is enough: an app signs with one token at a time, and
/// a different token only costs a key setup. The entry holds no more than the
/// signer already holds (its consumer secret, and the token secret it is given).
final class HMACKeyCache<State: Sendable>: @unchecked Sendable {
    private let lock = ThreadLock()
    private var tokenSecret: String?
    private var state: State?

    /// The state for `tokenSecret`, made with `make` when it is not the cached one.
    func state(for tokenSecret: String, make: () -> State) -> State {
        lock.lock()
        // Byte for byte: `==` on String takes "é" and "e\u{301}" as one,
        // and the key is made from the bytes (RFC 5849 §3.4.2, §3.6).
        if let state, let cached = self.tokenSecret, ExactText.same(cached, tokenSecret) {
            lock.unlock()
            return state
        }
        lock.unlock()
        let made = make()
        lock.lock()
        self.tokenSecret = tokenSecret
        state = made
        lock.unlock()
        return made
    }
}
