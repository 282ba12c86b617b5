// "Sign in with Google": who signed in, verified (OpenID Connect), and what
// Google's UserInfo endpoint says about them. Run:
//   AUTHKIT_GOOGLE_CLIENT_ID=… AUTHKIT_GOOGLE_CLIENT_SECRET=… swift run --package-path Examples GoogleSignInExample
// (a "Desktop app" OAuth client), or offline, against the sandbox's emulation of Google:
//   swift run --package-path Examples GoogleSignInExample --sandbox
import AuthKit
import AuthKitLoopback
import AuthKitSandbox
import Foundation

// 1. Google, from the bundled providers/google.json: its issuer, its keys
//    (jwks_uri), its UserInfo endpoint; default scopes openid email profile.
let google = try ProviderCatalog.standard().descriptor(id: "google")

// 2. Sign in. The ID token is verified before authorize returns: signature
//    against Google's published keys, iss, aud, exp, the nonce this sign-in
//    sent (Core §3.1.3.7). A token that fails any check stores nothing.
func signIn(_ client: OAuth2Client, using agent: some UserAgent) async throws {
    let credential = try await client.authorize(using: agent)
    guard let identity = credential.identity else { return }
    // 3. issuer + subject identify the user for good; the email can change hands.
    print("Signed in as \(identity.displayName), ID token verified (subject \(identity.subject))")

    // 4. UserInfo (Core §5.3): refused unless its sub is the ID token's.
    let info = try await client.userInfo(credential)
    print("UserInfo:", info.name ?? "no name", info.email ?? "no email")
}

do {
    if CommandLine.arguments.contains("--sandbox") {
        // The same descriptor, emulated on 127.0.0.1, with keys of its own.
        try await Sandbox.with(emulating: google) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            try await signIn(client, using: sandbox.userAgent(account: "alice"))
        }
    } else {
        let client = try OAuth2Client(descriptor: google, settings: ClientSettings.standard(for: google))
        try await signIn(client, using: LoopbackUserAgent())
    }
} catch {
    // AuthKit's errors say what failed and what to do: a missing client id,
    // an ID token refused (code .idTokenRejected; the words name the check), no network.
    print("Sign-in failed: \(error)")
    exit(1)
}
