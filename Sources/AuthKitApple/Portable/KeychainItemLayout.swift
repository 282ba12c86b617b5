import AuthKit
import Foundation

/// How credentials are laid out in the Keychain, and the queries that reach
/// them — built here, as names of the Security framework's constants, so the
/// layout is tested on Linux; `KeychainCredentialStore` turns them into the
/// constants on Apple platforms.
///
/// One generic-password item per credential: service ``service``, account
/// `provider` or `provider/label` (a `/` in a provider id written `%2F`), the
/// credential's JSON as the data. Not synchronized to other devices, and
/// readable after the first unlock by default, so a background refresh works
/// while the device is locked; `ThisDeviceOnly`, so an encrypted backup holds
/// the tokens but never restores them to another device.
package struct KeychainItemLayout: Sendable, Hashable {
    /// `kSecAttrService` of every item (`dev.authkit.credentials`).
    package var service: String
    /// `kSecAttrAccessGroup`: share the credentials with an app extension
    /// (the group must be in the app's `keychain-access-groups` entitlement).
    package var accessGroup: String?
    package var accessibility: KeychainAccessibility
    /// macOS: the data protection keychain, as on iOS (true), or the
    /// file-based login keychain (false). The data protection keychain is
    /// only for code signed with an entitlement that names it (TN3137, "On
    /// Mac keychain APIs and implementations"): a command-line tool has none,
    /// and is refused there (errSecMissingEntitlement). The file-based
    /// keychain takes neither accessibility nor synchronizability, so its
    /// items are written without them.
    package var dataProtectionKeychain: Bool

    package init(
        service: String = "dev.authkit.credentials", accessGroup: String? = nil,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly, dataProtectionKeychain: Bool = true
    ) {
        self.service = service
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.dataProtectionKeychain = dataProtectionKeychain
    }

    /// An item's data: the credential as JSON, dates in ISO 8601 (as in `credentials.json`).
    package func data(for credential: Credential) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(credential)
    }

    /// The credential in an item's data; an item that is not one names the item.
    package func credential(from data: Data, account: String) throws -> Credential {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let credential = try decoder.decode(Credential.self, from: data)
            guard credential.key == key(forAccount: account) else {
                throw AuthKitError.store(
                    path: "Keychain item \(service)/\(account)",
                    reason: .init(
                        .invalidContents, "holds the credential of \(credential.key), not its own; delete it."))
            }
            return credential
        } catch let error as AuthKitError {
            throw error
        } catch {
            throw AuthKitError.store(
                path: "Keychain item \(service)/\(account)",
                reason: .init(.invalidContents, "is not a credential AuthKit wrote (\(error)); delete it."))
        }
    }

    /// `kSecAttrAccount` of `key`'s item: `provider` or `provider/label`.
    /// A provider id is the name of a descriptor file and holds no `/`, but
    /// a `CredentialKey` can be made with any text: there a `/` (and the
    /// `%` that escapes it) is written `%2F` (`%25`), or `a/b`'s credential
    /// and `a`'s labelled `b` shared one item, each overwriting the other.
    /// Every id without either is written as before.
    package func account(for key: CredentialKey) -> String {
        var provider = ""
        for character in key.providerID {
            switch character {
            case "%": provider += "%25"
            case "/": provider += "%2F"
            default: provider.append(character)
            }
        }
        return provider + (key.label.map { "/" + $0 } ?? "")
    }

    /// The key an item's account names; `nil` for an account AuthKit did not write.
    package func key(forAccount account: String) -> CredentialKey? {
        let parts = account.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let written = parts.first, !written.isEmpty else { return nil }
        var provider = ""
        var rest = Substring(written)
        while let character = rest.first {
            if rest.hasPrefix("%25") {
                provider.append("%")
                rest = rest.dropFirst(3)
            } else if rest.hasPrefix("%2F") {
                provider.append("/")
                rest = rest.dropFirst(3)
            } else {
                provider.append(character)
                rest = rest.dropFirst()
            }
        }
        return CredentialKey(providerID: provider, label: parts.count == 2 ? parts[1] : nil)
    }

    /// The attributes that identify `key`'s item (or, with `nil`, every item of this layout).
    package func identity(_ key: CredentialKey?) -> KeychainQuery {
        var query: KeychainQuery = [
            .itemClass: .constant("kSecClassGenericPassword"),
            .service: .string(service),
        ]
        if dataProtectionKeychain {
            // Tokens stay on this device: never an iCloud Keychain item (the
            // file-based keychain has no synchronized items).
            query[.synchronizable] = .bool(false)
            // macOS: the data protection keychain, as on iOS, not the file-based one.
            query[.useDataProtectionKeychain] = .bool(true)
        }
        if let key { query[.account] = .string(account(for: key)) }
        if let accessGroup { query[.accessGroup] = .string(accessGroup) }
        return query
    }

    /// `SecItemCopyMatching`: one item's data.
    package func read(_ key: CredentialKey) -> KeychainQuery {
        identity(key).merging([.returnData: .bool(true), .matchLimit: .constant("kSecMatchLimitOne")]) { $1 }
    }

    /// `SecItemCopyMatching`: every item's attributes (its account), not its
    /// data, each item's then read with ``read(_:)``: the file-based keychain
    /// refuses data for more than one item at once (errSecParam).
    package func readAll() -> KeychainQuery {
        identity(nil).merging([.returnAttributes: .bool(true), .matchLimit: .constant("kSecMatchLimitAll")]) { $1 }
    }

    /// `SecItemAdd`: a new item holding `data`.
    package func add(_ key: CredentialKey, data: Data) -> KeychainQuery {
        identity(key).merging(update(data: data)) { $1 }.merging([.label: .string("AuthKit: \(account(for: key))")]) {
            $1
        }
    }

    /// `SecItemUpdate`'s attributes: the new data, and the accessibility (so
    /// a changed layout applies to items written before).
    package func update(data: Data) -> KeychainQuery {
        guard dataProtectionKeychain else { return [.valueData: .data(data)] }
        return [.valueData: .data(data), .accessible: .constant(accessibility.constantName)]
    }
}

/// `kSecAttrAccessible`: when the item can be read. Its four values are
/// two choices, and `KeychainCredentialStore` takes them as two Bools
/// (``readableWhenLocked``, ``thisDeviceOnly``); the constant's name is
/// said in their documentation.
package enum KeychainAccessibility: String, Sendable, Hashable, CaseIterable {
    /// After the first unlock since boot, on this device only: background refresh works; no backup restores it elsewhere.
    case afterFirstUnlockThisDeviceOnly
    /// Only while unlocked, on this device only.
    case whenUnlockedThisDeviceOnly
    /// After the first unlock; may move to a new device with an encrypted backup.
    case afterFirstUnlock
    /// Only while unlocked; may move to a new device with an encrypted backup.
    case whenUnlocked

    package init(readableWhenLocked: Bool, thisDeviceOnly: Bool) {
        switch (readableWhenLocked, thisDeviceOnly) {
        case (true, true): self = .afterFirstUnlockThisDeviceOnly
        case (false, true): self = .whenUnlockedThisDeviceOnly
        case (true, false): self = .afterFirstUnlock
        case (false, false): self = .whenUnlocked
        }
    }

    /// Readable after the first unlock since boot, locked or not (`AfterFirstUnlock…`).
    package var readableWhenLocked: Bool { rawValue.hasPrefix("afterFirstUnlock") }
    /// Never restored to another device (`…ThisDeviceOnly`).
    package var thisDeviceOnly: Bool { rawValue.hasSuffix("ThisDeviceOnly") }

    package var constantName: String {
        "kSecAttrAccessible" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }
}

/// A Keychain query as constant names and values.
package typealias KeychainQuery = [KeychainAttribute: KeychainValue]

/// The Security framework constants AuthKit uses as keys (their names).
package enum KeychainAttribute: String, Sendable, Hashable, CaseIterable {
    case itemClass = "kSecClass"
    case service = "kSecAttrService"
    case account = "kSecAttrAccount"
    case accessGroup = "kSecAttrAccessGroup"
    case accessible = "kSecAttrAccessible"
    case synchronizable = "kSecAttrSynchronizable"
    case label = "kSecAttrLabel"
    case useDataProtectionKeychain = "kSecUseDataProtectionKeychain"
    case valueData = "kSecValueData"
    case returnData = "kSecReturnData"
    case returnAttributes = "kSecReturnAttributes"
    case matchLimit = "kSecMatchLimit"
}

package enum KeychainValue: Sendable, Hashable {
    case string(String)
    case data(Data)
    case bool(Bool)
    /// A Security framework constant, by name (`kSecClassGenericPassword`).
    case constant(String)
}
