import AuthKit
import AuthKitOAuth1
import Foundation

/// What a command needs from the environment: the provider catalogue, the
/// user's configuration, the credential store, and authenticators built from them.
struct Workspace {
    let catalog: ProviderCatalog
    let store: FileCredentialStore
    let environment: [String: String]

    /// - Throws: when `$AUTHKIT_BUNDLED_PROVIDERS` or a `--providers-dir` names
    ///   no directory (silently loading nothing would hide every provider).
    init(global: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        for (name, url) in [("$AUTHKIT_BUNDLED_PROVIDERS", ProviderCatalog.bundledDirectoryOverride(environment: environment))]
            + global.providerDirectoryURLs.map({ ("--providers-dir", Optional($0)) }) {
            guard let url else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError("\(name) names \(url.path), which is not a directory of provider files.", status: .usage)
            }
        }
        self.environment = environment
        self.catalog = ProviderCatalog.standard(additional: global.providerDirectoryURLs, environment: environment)
        // The store logs a warning (with the chmod that fixes it) when its
        // files are readable by others.
        self.store = FileCredentialStore(environment: environment)
    }

    /// The descriptor for `id`. One that replaces a bundled descriptor and
    /// sends to hosts the bundled one did not is announced on standard error:
    /// a file someone else placed must not redirect sign-ins silently.
    func descriptor(_ id: String) throws -> ProviderDescriptor {
        let descriptor = try catalog.descriptor(id: id)
        if let entry = catalog.entry(id: id), !entry.newHosts.isEmpty {
            Console.err("authkit: note: '\(id)' comes from \(entry.file), which replaces \(entry.replaced?.source ?? "another descriptor") and sends to \(entry.newHosts.map { DisplayText.sanitized($0) }.joined(separator: ", ")) instead of \(entry.replaced.map { $0.endpointHosts.sorted().joined(separator: ", ") } ?? "?").")
        }
        return descriptor
    }

    /// The authenticator for `descriptor`'s protocol, with settings from
    /// `explicit`, then the environment, then config.json.
    func authenticator(for descriptor: ProviderDescriptor, explicit: ClientSettings = ClientSettings()) throws -> any Authenticator {
        let settings = try ClientSettings.standard(for: descriptor, explicit: explicit, environment: environment)
        switch descriptor.protocol {
        case .oauth2:
            return try OAuth2Client(descriptor: descriptor, settings: settings)
        case .oauth1:
            return try OAuth1Client(descriptor: descriptor, settings: settings)
        }
    }

    /// The stored credential for `key`, or an error that says how to get one.
    func credential(_ key: CredentialKey) async throws -> Credential {
        guard let credential = try await store.credential(for: key) else {
            throw AuthKitError.signInRequired(key, reason: .noCredential)
        }
        return credential
    }

    /// The credential source for `key`: its provider's authenticator (with
    /// `explicit` settings), this store; refreshes are shared with other
    /// processes through the store's refresh lock.
    func source(_ key: CredentialKey, explicit: ClientSettings = ClientSettings()) throws -> CredentialSource {
        CredentialSource(authenticator: try authenticator(for: descriptor(key.providerID), explicit: explicit), store: store, key: key)
    }
}
