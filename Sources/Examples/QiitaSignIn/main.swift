// Signs in to Qiita with AuthKit and prints the signed-in user.
// Run: AUTHKIT_QIITA_CLIENT_ID=… AUTHKIT_QIITA_CLIENT_SECRET=… swift run QiitaSignInExample
import AuthKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// 1. The provider, from the bundled providers/qiita.json (or your override of it).
let qiita = try ProviderCatalog.standard().descriptor(id: "qiita")

// 2. Your app's client id and secret: from AUTHKIT_QIITA_CLIENT_ID and
//    AUTHKIT_QIITA_CLIENT_SECRET, or from $AUTHKIT_HOME/config.json.
let settings = try ClientSettings.standard(for: qiita)
let client = try OAuth2Client(descriptor: qiita, settings: settings)

// 3. Sign in. ManualUserAgent prints the URL and reads back the URL the browser
//    was redirected to; AuthKit checks `state` and exchanges the code.
let credential = try await client.authorize(
    using: ManualUserAgent(),
    options: AuthorizationOptions(scopes: ["read_qiita"]))

// 4. Keep it: $AUTHKIT_HOME/credentials.json, mode 0600.
try await FileCredentialStore().save(credential)
print("Signed in:", credential) // description masks the token

// 5. Call the API with it (an Authorization: Bearer header).
let request = try client.authorize(
    URLRequest(url: URL(string: "https://qiita.com/api/v2/authenticated_user")!),
    with: credential)
let (data, _) = try await URLSession.shared.data(for: request)
print(String(decoding: data, as: UTF8.self))
