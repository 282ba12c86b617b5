// Signs in to X (Twitter) with OAuth 1.0a through the browser, then posts a
// signed request. Run:
//   AUTHKIT_TWITTER_CLIENT_ID=… AUTHKIT_TWITTER_CLIENT_SECRET=… swift run --package-path Examples TwitterSignInExample
// (register http://127.0.0.1:8765/callback as the app's callback URL).
import AuthKit
import AuthKitLoopback
import AuthKitOAuth1
import Foundation

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking // URLRequest signing on Linux, as URLRequest itself
    import FoundationNetworking
#endif

// 1. The provider and your app's consumer key and secret, as for any provider.
let twitter = try ProviderCatalog.standard().descriptor(id: "twitter")
let client = try OAuth1Client(descriptor: twitter, settings: ClientSettings.standard(for: twitter))

// 2. Sign in: request token, the browser for consent, the callback caught on
//    127.0.0.1, the access token. The same call as for an OAuth 2.0 provider.
let credential = try await client.authorize(using: LoopbackUserAgent())
try await FileCredentialStore().saveSignIn(credential)
print("Signed in as", credential.rawFields["screen_name"]?.scalarText ?? "?")

// 3. A signed POST with a form body (the body's parameters are signed too).
var post = URLRequest(url: URL(string: "https://api.x.com/1.1/statuses/update.json")!)
post.httpMethod = "POST"
post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
post.httpBody = Data("status=Hello%20from%20AuthKit%21".utf8) // form-encoded: RFC 5849 §3.6 encoding
let signed = try client.authorize(post, with: credential) // Authorization: OAuth oauth_signature="…", …
let (data, _) = try await URLSession.shared.data(for: signed)
print(String(decoding: data, as: UTF8.self))
