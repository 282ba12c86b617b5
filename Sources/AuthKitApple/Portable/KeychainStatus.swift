/// What a Keychain `OSStatus` means for the user, with what to do: the
/// Security framework's own messages name the code, not the fix.
package enum KeychainStatus {
    package static let success: Int32 = 0
    package static let itemNotFound: Int32 = -25300
    package static let duplicateItem: Int32 = -25299
    package static let interactionNotAllowed: Int32 = -25308
    package static let missingEntitlement: Int32 = -34018
    package static let userCanceled: Int32 = -128

    package static func explanation(_ status: Int32, accessGroup: String?) -> String {
        switch status {
        case interactionNotAllowed:
            return
                "the Keychain cannot be read now (the device is locked and the items are readable only when unlocked); try again after unlock, or use accessibility afterFirstUnlockThisDeviceOnly (OSStatus \(status))."
        case missingEntitlement:
            return
                "the app is not entitled to the Keychain\(accessGroup.map { " access group '\($0)'" } ?? ""); add it to keychain-access-groups in the app's entitlements (OSStatus \(status))."
        case userCanceled:
            return "the user cancelled the Keychain prompt (OSStatus \(status))."
        case duplicateItem:
            return
                "an item for this account was added by another writer at the same moment (OSStatus \(status)); try again."
        default:
            return "the Keychain answered OSStatus \(status)."
        }
    }
}
