import AuthKit

/// What a Keychain `OSStatus` means for the user, with what to do: the
/// Security framework's own messages name the code, not the fix.
package enum KeychainStatus {
    package static let success: Int32 = 0
    package static let itemNotFound: Int32 = -25300
    package static let duplicateItem: Int32 = -25299
    package static let interactionNotAllowed: Int32 = -25308
    package static let missingEntitlement: Int32 = -34018
    package static let userCanceled: Int32 = -128

    /// What `status` means, as a case a caller can switch on: a locked
    /// Keychain is ``AuthKit/AuthKitError/Code/storeLocked`` (try
    /// again once unlocked: an app must not take it as signed out), every
    /// other failure `inaccessible`.
    package static func problem(_ status: Int32, accessGroup: String?) -> AuthKitError.StoreProblem {
        let detail = explanation(status, accessGroup: accessGroup)
        return status == interactionNotAllowed ? .locked(detail) : .inaccessible(detail)
    }

    package static func explanation(_ status: Int32, accessGroup: String?) -> String {
        switch status {
        case interactionNotAllowed:
            // On iOS: a device not unlocked since it started (the default
            // accessibility, after first unlock, covers a device locked
            // since), or items made readable only while unlocked. On macOS's
            // file-based keychain: a locked keychain and no way to prompt.
            return
                "the Keychain is locked and cannot be read or written until it is unlocked: on iOS, until the device is first unlocked after it starts (or, for items readable only when unlocked, while it is locked); on macOS, the login keychain, with no window to ask in (over SSH: security unlock-keychain). Nothing stored is lost; try again once it is unlocked (OSStatus \(status))."
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
