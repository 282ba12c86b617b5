// Signs in to Qiita with AuthKit and prints the signed-in user.
// Run: AUTHKIT_QIITA_CLIENT_ID=… AUTHKIT_QIITA_CLIENT_SECRET=… swift run --package-path Examples QiitaSignInExample
import AuthKit
import Foundation
import HTTPTypes

// 1. The provider, from the bundled providers/qiita.json (or your override of it;
//    what an override moves or turns off is told, as authkit tells it).
let catalog = ProviderCatalog.standard()
let qiita = try catalog.descriptor(id: "qiita")
for note in catalog.overrideNotes(for: "qiita") { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }

// 2. Your app's client id and secret: from AUTHKIT_QIITA_CLIENT_ID and
//    AUTHKIT_QIITA_CLIENT_SECRET, or from $AUTHKIT_HOME/config.json.
let settings = try ClientSettings.standard(for: qiita)
let client = try OAuth2Client(descriptor: qiita, settings: settings)

// 3. Sign in. manualUserAgent() prints the URL and reads back the URL the browser
//    was redirected to; AuthKit checks `state` and exchanges the code.
let credential = try await client.authorize(
    using: manualUserAgent(),
    options: AuthorizationOptions(scopes: ["read_qiita"]))

// 4. Keep it: $AUTHKIT_HOME/credentials.json, mode 0600. saveSignIn waits for
//    a refresh of this account under way elsewhere, so the new sign-in stays.
let store = FileCredentialStore()
try await store.saveSignIn(credential)
print("Signed in:", credential) // description masks the token

// 5. Use it through a CredentialSource: a valid credential on every call
//    (refreshed once, and saved, when due, even with other processes asking),
//    sent only to the request's own origin.
let source = CredentialSource(authenticator: client, store: store, key: credential.key)
let (response, body) = try await source.send(
    HTTPRequest(method: .get, url: URL(string: "https://qiita.com/api/v2/authenticated_user")!))
var data = Data()
for try await chunk in body { data.append(chunk) }
print(response.status, String(decoding: data, as: UTF8.self))
