import AuthKit
import Foundation
import Testing

/// What every ``CredentialStore`` must do, whatever it keeps credentials in:
/// the file store, the in-memory one and PostgreSQL's run the same checks.
///
/// - Parameters:
///   - store: an empty store.
///   - sameData: another instance over the same data (another process, in
///     effect), when the store has one.
public func checkCredentialStoreContract(_ store: any CredentialStore, sameData: (any CredentialStore)? = nil)
    async throws
{
    func credential(_ provider: String, _ label: String? = nil, token: String) -> Credential {
        Credential(providerID: provider, label: label, accessToken: token, tokenType: "Bearer")
    }
    #expect(try await store.allCredentials().isEmpty)
    try await store.save(credential("qiita", token: "one"))
    try await store.save(credential("qiita", "work", token: "two"))
    try await store.save(credential("github", token: "three"))
    try await store.save(credential("qiita", token: "four")) // replaces "one"
    // Sorted by provider, then label, the default account first.
    #expect(try await store.allCredentials().map(\.accessToken) == ["three", "four", "two"])
    #expect(try await store.credential(for: CredentialKey(providerID: "qiita", label: "work"))?.accessToken == "two")
    #expect(try await store.credential(for: CredentialKey(providerID: "qiita", label: "other")) == nil)
    if let sameData {
        #expect(try await sameData.allCredentials().map(\.accessToken) == ["three", "four", "two"])
    }
    #expect(try await store.remove(CredentialKey(providerID: "qiita"))?.accessToken == "four")
    #expect(try await store.remove(CredentialKey(providerID: "qiita")) == nil)
    #expect(try await store.allCredentials().map(\.accessToken) == ["three", "two"])

    // An empty label is the default account.
    try await store.save(credential("qiita", "", token: "empty"))
    #expect(try await store.credential(for: CredentialKey(providerID: "qiita"))?.accessToken == "empty")
    #expect(try await store.remove(CredentialKey(providerID: "qiita", label: ""))?.accessToken == "empty")

    // Writers at once lose nothing.
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<4 {
            group.addTask {
                for index in 0..<10 {
                    try await (sameData != nil && writer % 2 == 1 ? sameData! : store).save(
                        credential("p\(writer)", "n\(index)", token: "t\(writer)-\(index)"))
                }
            }
        }
        try await group.waitForAll()
    }
    #expect(try await store.allCredentials().count == 2 + 40)

    // The refresh lock excludes: bodies for one key never overlap.
    let overlap = OverlapCounter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<6 {
            group.addTask {
                let instance = sameData != nil && index % 2 == 1 ? sameData! : store
                try await instance.withRefreshLock(for: CredentialKey(providerID: "github"), timeout: .seconds(30)) {
                    overlap.enter()
                    try await Task.sleep(for: .milliseconds(30))
                    overlap.leave()
                }
            }
        }
        try await group.waitForAll()
    }
    #expect(overlap.maximum == 1)
}

/// How many bodies ran at once, at most.
final class OverlapCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private(set) var maximum = 0

    func enter() {
        lock.lock()
        current += 1
        maximum = max(maximum, current)
        lock.unlock()
    }

    func leave() {
        lock.lock()
        current -= 1
        lock.unlock()
    }
}
