#if canImport(Security)
    import AuthKit
    import Foundation
    import Security

    /// A ``AuthKit/CredentialStore`` in the Keychain: one generic-password item
    /// per credential: service `service`, account `provider` or
    /// `provider/label` (a `/` in a provider id written `%2F`), the credential's
    /// JSON as the data. Not synchronized to other devices; by default
    /// readable after the first unlock, so a background refresh works while
    /// the device is locked; `ThisDeviceOnly`, so a backup holds them
    /// encrypted but they are never restored to another device.
    ///
    /// Refresh locking: the Keychain has no locks. Within the app, refreshes of
    /// one credential are serialised by AuthKit's in-process lock. An app and its
    /// extensions sharing the credentials through an access group are separate
    /// processes: give them a `lockDirectory` in the app group's container, and
    /// the refresh takes an `flock` there, as `FileCredentialStore` does beside
    /// its file, so a rotating refresh token is sent once (RFC 9700 §4.14.2).
    public struct KeychainCredentialStore: CredentialStore {
        /// The items and queries, built in portable code so they are tested on Linux.
        package let layout: KeychainItemLayout
        /// Where cross-process refresh locks live (an app group container); `nil`: this process only.
        public let lockDirectory: URL?

        /// - Parameters:
        ///   - service: `kSecAttrService` of every item.
        ///   - accessGroup: `kSecAttrAccessGroup`, to share the credentials with
        ///     an app extension (the group must be in the app's
        ///     `keychain-access-groups` entitlement). Every process that shares
        ///     them passes the same group: with `nil`, reads match items in
        ///     any of the app's groups while a new item goes to its default
        ///     one, so an app on `nil` beside an extension on a named group
        ///     could each keep a copy, and read the other's stale one.
        ///   - readableWhenLocked: `true` (the default): readable after the
        ///     first unlock since the device started, locked or not, so a
        ///     background refresh works (`kSecAttrAccessibleAfterFirstUnlock…`);
        ///     `false`: only while the device is unlocked (`…WhenUnlocked…`).
        ///   - thisDeviceOnly: `true` (the default): an encrypted backup holds
        ///     the items but never restores them to another device
        ///     (`…ThisDeviceOnly`); `false`: they may move to a new device with
        ///     an encrypted backup. The two together are `kSecAttrAccessible`.
        ///   - dataProtectionKeychain: macOS: the data protection keychain, as
        ///     on iOS (the default), which only code signed with an entitlement
        ///     naming it may use; `false` for the file-based login keychain,
        ///     which a command-line tool without entitlements can use
        ///     (neither of the two above then applies). Ignored elsewhere.
        ///   - lockDirectory: see ``lockDirectory``.
        public init(
            service: String = "dev.authkit.credentials", accessGroup: String? = nil,
            readableWhenLocked: Bool = true, thisDeviceOnly: Bool = true, dataProtectionKeychain: Bool = true,
            lockDirectory: URL? = nil
        ) {
            #if os(macOS)
                let dataProtection = dataProtectionKeychain
            #else
                let dataProtection = true
            #endif
            self.layout = KeychainItemLayout(
                service: service, accessGroup: accessGroup,
                accessibility: KeychainAccessibility(
                    readableWhenLocked: readableWhenLocked, thisDeviceOnly: thisDeviceOnly),
                dataProtectionKeychain: dataProtection)
            self.lockDirectory = lockDirectory
        }

        /// The service, access group and accessibility the items are written with.
        public var service: String { layout.service }
        public var accessGroup: String? { layout.accessGroup }
        public var readableWhenLocked: Bool { layout.accessibility.readableWhenLocked }
        public var thisDeviceOnly: Bool { layout.accessibility.thisDeviceOnly }

        public func credential(for key: CredentialKey) async throws -> Credential? {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(Self.dictionary(layout.read(key)), &result)
            if status == KeychainStatus.itemNotFound { return nil }
            try check(status)
            guard let data = result as? Data else { return nil }
            return try layout.credential(from: data, account: layout.account(for: key))
        }

        public func allCredentials() async throws -> [Credential] {
            var credentials = [Credential]()
            // The accounts first, then each item's data (see `readAll`).
            for key in try keys() {
                guard let credential = try await credential(for: key) else { continue }
                credentials.append(credential)
            }
            return credentials.sorted { ($0.providerID, $0.label ?? "") < ($1.providerID, $1.label ?? "") }
        }

        /// The accounts stored, from the items' attributes alone: one item
        /// whose data does not decode does not hide the others (`authkit
        /// token list`, `token move` read each as they go).
        package func keys() throws -> [CredentialKey] {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(Self.dictionary(layout.readAll()), &result)
            if status == KeychainStatus.itemNotFound { return [] }
            try check(status)
            let items = result as? [[String: Any]] ?? []
            // Not ``checkSaves()``'s probe, left behind by a process that
            // ended between its add and its delete: its empty data is no
            // credential, and reading it failed the whole listing.
            return items.compactMap { item in
                (item[kSecAttrAccount as String] as? String).flatMap { layout.key(forAccount: $0) }
            }.filter { $0 != Self.probe }
        }

        /// Whether the Keychain answers at all: a read of an item no one
        /// writes, which finds nothing where there is a keychain, and fails
        /// where there is none to use (no entitlement, a session without a
        /// login). A locked keychain answers too (the read decrypts nothing):
        /// it is there, and what is stored in it is said `locked` when read.
        package func checkAnswers() throws {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(
                Self.dictionary(layout.read(Self.probe)), &result)
            if status != KeychainStatus.itemNotFound { try check(status) }
        }

        /// The item ``checkAnswers()`` reads and ``checkSaves()`` writes and
        /// deletes: no provider has this id.
        static let probe = CredentialKey(providerID: "authkit-availability-check")

        /// Whether a credential can be saved here now: an item written and
        /// deleted, so that a sign-in that could not be saved fails before
        /// the user consents. ``checkAnswers()`` would not do: a locked
        /// keychain (over SSH, with no window to prompt in; a device not
        /// unlocked since it started) answers a read of nothing as an open
        /// one does, and the save after the consent failed. Fails, `locked`,
        /// where the Keychain is locked.
        package func checkSaves() throws {
            let probe = Self.probe
            let added = SecItemAdd(Self.dictionary(layout.add(probe, data: Data())), nil)
            guard added == KeychainStatus.success || added == KeychainStatus.duplicateItem else {
                try check(added)
                return
            }
            let deleted = SecItemDelete(Self.dictionary(layout.identity(probe)))
            if deleted != KeychainStatus.itemNotFound { try check(deleted) }
        }

        public func save(_ credential: Credential) async throws {
            let data = try layout.data(for: credential)
            let status = SecItemUpdate(
                Self.dictionary(layout.identity(credential.key)), Self.dictionary(layout.update(data: data)))
            if status == KeychainStatus.itemNotFound {
                let added = SecItemAdd(Self.dictionary(layout.add(credential.key, data: data)), nil)
                if added == KeychainStatus.duplicateItem {
                    // Another writer (the app's extension, a second task)
                    // added it between the two calls: update theirs; gone
                    // again (a third removed it meanwhile), add it once more.
                    let updated = SecItemUpdate(
                        Self.dictionary(layout.identity(credential.key)), Self.dictionary(layout.update(data: data)))
                    try check(
                        updated == KeychainStatus.itemNotFound
                            ? SecItemAdd(Self.dictionary(layout.add(credential.key, data: data)), nil) : updated)
                } else {
                    try check(added)
                }
            } else {
                try check(status)
            }
        }

        public func remove(_ key: CredentialKey) async throws -> Credential? {
            // An item whose data does not decode (written by hand, or by a
            // later version) is removed all the same: its error says to
            // delete it, and this is how.
            let existing = try? await credential(for: key)
            let status = SecItemDelete(Self.dictionary(layout.identity(key)))
            if status == KeychainStatus.itemNotFound { return nil }
            try check(status)
            return existing ?? Credential(providerID: key.providerID, label: key.label, accessToken: "")
        }

        public func withRefreshLock<Result: Sendable>(
            for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
        ) async throws -> Result {
            guard let lockDirectory else {
                return try await KeyedAsyncLock.shared.withLock(
                    "keychain\u{0}\(layout.service)\u{0}\(layout.account(for: key))",
                    timeout: timeout, what: "the refresh of \(key)", body)
            }
            // Created when missing (a new or removed AUTHKIT_HOME, an app group's first run).
            return try await RefreshLockFile(directory: lockDirectory, key: key).withLock(
                timeout: timeout, prepare: { try FileSystem.createPrivateDirectory(lockDirectory.path) }, body)
        }

        private func check(_ status: OSStatus) throws {
            guard status != KeychainStatus.success else { return }
            throw AuthKitError.store(
                path: "Keychain (service \(layout.service))",
                reason: KeychainStatus.problem(status, accessGroup: layout.accessGroup))
        }

        /// The query with the Security framework's constants for their names.
        static func dictionary(_ query: KeychainQuery) -> CFDictionary {
            var result = [String: Any]()
            for (attribute, value) in query {
                let key: CFString
                switch attribute {
                case .itemClass: key = kSecClass
                case .service: key = kSecAttrService
                case .account: key = kSecAttrAccount
                case .accessGroup: key = kSecAttrAccessGroup
                case .accessible: key = kSecAttrAccessible
                case .synchronizable: key = kSecAttrSynchronizable
                case .label: key = kSecAttrLabel
                case .useDataProtectionKeychain: key = kSecUseDataProtectionKeychain
                case .valueData: key = kSecValueData
                case .returnData: key = kSecReturnData
                case .returnAttributes: key = kSecReturnAttributes
                case .matchLimit: key = kSecMatchLimit
                }
                switch value {
                case .string(let text): result[key as String] = text
                case .data(let data): result[key as String] = data
                case .bool(let flag): result[key as String] = flag
                case .constant(let name): result[key as String] = constant(named: name)
                }
            }
            return result as CFDictionary
        }

        private static func constant(named name: String) -> CFString {
            switch name {
            case "kSecClassGenericPassword": return kSecClassGenericPassword
            case "kSecMatchLimitOne": return kSecMatchLimitOne
            case "kSecMatchLimitAll": return kSecMatchLimitAll
            case "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly":
                return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case "kSecAttrAccessibleWhenUnlockedThisDeviceOnly": return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            case "kSecAttrAccessibleAfterFirstUnlock": return kSecAttrAccessibleAfterFirstUnlock
            case "kSecAttrAccessibleWhenUnlocked": return kSecAttrAccessibleWhenUnlocked
            default: preconditionFailure("KeychainItemLayout produced an unknown constant \(name)")
            }
        }
    }
#endif
