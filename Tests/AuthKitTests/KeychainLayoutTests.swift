import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitApple

/// The Keychain items and queries, as constant names: what the Apple-only
/// store sends to SecItem*, checked on Linux.
@Suite struct KeychainLayoutTests {
    let layout = KeychainItemLayout()

    @Test func oneGenericPasswordPerCredentialKeptOnThisDevice() {
        let query = layout.read(CredentialKey(providerID: "qiita", label: "work"))
        #expect(query[.itemClass] == .constant("kSecClassGenericPassword"))
        #expect(query[.service] == .string("dev.authkit.credentials"))
        #expect(query[.account] == .string("qiita/work"))
        #expect(query[.synchronizable] == .bool(false))
        #expect(query[.useDataProtectionKeychain] == .bool(true))
        #expect(query[.returnData] == .bool(true) && query[.matchLimit] == .constant("kSecMatchLimitOne"))
        #expect(query[.accessGroup] == nil)
    }

    @Test func writesCarryTheAccessibilityAndTheGroup() {
        let shared = KeychainItemLayout(
            service: "com.example.tokens", accessGroup: "TEAMID.com.example.shared",
            accessibility: .whenUnlockedThisDeviceOnly)
        let add = shared.add(CredentialKey(providerID: "github"), data: Data("{}".utf8))
        #expect(add[.accessible] == .constant("kSecAttrAccessibleWhenUnlockedThisDeviceOnly"))
        #expect(add[.accessGroup] == .string("TEAMID.com.example.shared"))
        #expect(add[.account] == .string("github"))
        #expect(add[.valueData] == .data(Data("{}".utf8)))
        #expect(
            layout.update(data: Data())[.accessible] == .constant("kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly"))
        // Identity queries never carry data or return flags (SecItemUpdate and SecItemDelete refuse them).
        let identity = shared.identity(CredentialKey(providerID: "github"))
        #expect(identity[.valueData] == nil && identity[.returnData] == nil && identity[.accessible] == nil)
        #expect(shared.readAll()[.account] == nil && shared.readAll()[.matchLimit] == .constant("kSecMatchLimitAll"))
    }

    /// The command line's layout on macOS: the file-based login keychain,
    /// which a tool without entitlements may use, asked only what it takes.
    /// Listing reads accounts, then each item's data: the file-based keychain
    /// refuses data for all items at once.
    @Test func theFileBasedKeychainIsAskedOnlyWhatItTakes() {
        let login = KeychainItemLayout(dataProtectionKeychain: false)
        let key = CredentialKey(providerID: "github", label: "work")
        for query in [login.identity(key), login.read(key), login.add(key, data: Data("{}".utf8)), login.readAll()] {
            #expect(query[.useDataProtectionKeychain] == nil && query[.synchronizable] == nil)
            #expect(query[.accessible] == nil)
            #expect(query[.itemClass] == .constant("kSecClassGenericPassword"))
        }
        #expect(login.add(key, data: Data("{}".utf8))[.account] == .string("github/work"))
        for layout in [login, layout] {
            #expect(layout.readAll()[.returnData] == nil && layout.readAll()[.returnAttributes] == .bool(true))
        }
    }

    /// The store's two Bools name each of the four constants once, and read back as given.
    @Test func everyAccessibilityHasItsConstant() {
        for readable in [true, false] {
            for here in [true, false] {
                let accessibility = KeychainAccessibility(readableWhenLocked: readable, thisDeviceOnly: here)
                #expect(accessibility.readableWhenLocked == readable && accessibility.thisDeviceOnly == here)
                #expect(accessibility.constantName.contains("AfterFirstUnlock") == readable)
            }
        }
        #expect(
            KeychainAccessibility.allCases.map(\.constantName) == [
                "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly", "kSecAttrAccessibleWhenUnlockedThisDeviceOnly",
                "kSecAttrAccessibleAfterFirstUnlock", "kSecAttrAccessibleWhenUnlocked",
            ])
    }

    @Test func accountsRoundTripAndForeignItemsAreNamed() throws {
        for key in [CredentialKey(providerID: "qiita"), CredentialKey(providerID: "x", label: "a/b c")] {
            #expect(layout.key(forAccount: layout.account(for: key)) == key)
        }
        // Ids as descriptor files name them are written as they were, so items stored before are found.
        #expect(layout.account(for: CredentialKey(providerID: "qiita", label: "work")) == "qiita/work")
        // A provider id with a `/` (or the `%` that escapes it) is not another account's item.
        let slashed = [
            CredentialKey(providerID: "a/b"), CredentialKey(providerID: "a", label: "b"),
            CredentialKey(providerID: "a%2Fb"), CredentialKey(providerID: "a/b", label: "c/d"),
        ]
        #expect(Set(slashed.map(layout.account(for:))).count == slashed.count)
        for key in slashed { #expect(layout.key(forAccount: layout.account(for: key)) == key) }
        #expect(layout.key(forAccount: "") == nil)
        let credential = Credential(
            providerID: "qiita", accessToken: "t", expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
            obtainedAt: Date(timeIntervalSince1970: 1_700_000_000)) // whole seconds: ISO 8601, as in credentials.json
        let data = try layout.data(for: credential)
        #expect(try layout.credential(from: data, account: "qiita") == credential)
        // An item whose data names another credential, or is not one: an error naming the item, no crash.
        #expect(throws: AuthKitError.self) { try layout.credential(from: data, account: "github") }
        #expect { try layout.credential(from: Data("not json".utf8), account: "qiita") } throws: { error in
            "\(error)".contains("dev.authkit.credentials/qiita")
        }
    }

    /// A locked Keychain is a case of its own (`locked`: try again once it
    /// is unlocked), which an app must not take as "signed out"; its words
    /// say to unlock, not to choose the accessibility that is already the
    /// default. Every other status is `inaccessible`, saying what to do.
    @Test func keychainStatusesSayWhatToDo() {
        #expect(KeychainStatus.explanation(-34018, accessGroup: "TEAM.group").contains("keychain-access-groups"))
        let locked = KeychainStatus.problem(-25308, accessGroup: nil)
        #expect(locked.kind == .locked && locked.detail.contains("unlock"))
        #expect(!locked.detail.contains("afterFirstUnlockThisDeviceOnly"))
        #expect(KeychainStatus.problem(-34018, accessGroup: nil).kind == .inaccessible)
        #expect(KeychainStatus.explanation(-1, accessGroup: nil).contains("OSStatus -1"))
    }

    /// The lock a Keychain store with a lock directory takes (the one
    /// `FileCredentialStore` takes beside its file, whose cross-process
    /// behaviour CrossProcessStoreTests checks): held while the refresh runs.
    @Test func theCrossProcessRefreshLockIsHeldDuringTheRefresh() async throws {
        let directory = TemporaryDirectory.url("authkit-keychain-lock")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lock = RefreshLockFile(directory: directory, key: CredentialKey(providerID: "qiita"))
        let inside = LockedValue(false)
        try await lock.withLock(timeout: .seconds(5)) {
            inside.withLock { $0 = true }
            // A second process is simulated by a second open file description on the same path.
            let fd = open(lock.path, O_RDWR)
            defer { close(fd) }
            #expect(flock(fd, LOCK_EX | LOCK_NB) != 0, "the lock file must be held")
        }
        #expect(inside.withLock { $0 })
    }
}
