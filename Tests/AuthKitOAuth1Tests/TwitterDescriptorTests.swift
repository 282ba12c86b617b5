import AuthKit
import Foundation
import Testing

@testable import AuthKitOAuth1

/// providers/twitter.json, as shipped in the library.
@Suite struct TwitterDescriptorTests {
    @Test func bundledTwitterDescriptorIsValidAndDrivesTheClient() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        #expect(catalog.fileIssues["twitter"] == nil)
        let descriptor = try #require(catalog.entries["twitter"]?.descriptor)
        #expect(descriptor.protocol == .oauth1)
        let oauth1 = try #require(descriptor.oauth1)
        #expect(oauth1.requestTokenURL == "https://api.x.com/oauth/request_token")
        #expect(oauth1.authorizeURL == "https://api.x.com/oauth/authorize")
        #expect(oauth1.authenticateURL == "https://api.x.com/oauth/authenticate")
        #expect(oauth1.accessTokenURL == "https://api.x.com/oauth/access_token")
        #expect(oauth1.invalidateTokenURL == "https://api.x.com/1.1/oauth/invalidate_token")
        #expect(oauth1.signatureMethod == "HMAC-SHA1")
        #expect(descriptor.redirect.host == "127.0.0.1")

        let client = try OAuth1Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "key", clientSecret: "secret"))
        #expect(client.signer.signatureMethod == .hmacSHA1)
        #expect(client.defaultRedirectURI?.absoluteString == "http://127.0.0.1:8765/callback")
        #expect(!client.redirectPortIsFlexible)
    }

    @Test func validatorChecksTheInvalidationEndpoint() throws {
        let json = """
            {"id": "t", "protocol": "oauth1", "oauth1": {"requestTokenURL": "https://a.example/rt", "authorizeURL": "https://a.example/a",
             "accessTokenURL": "https://a.example/at", "invalidateTokenURL": "http://a.example/invalidate"}}
            """
        #expect(throws: AuthKitError.self) { _ = try DescriptorLoader().decode(Data(json.utf8), file: "t.json") }
        do {
            _ = try DescriptorLoader().decode(Data(json.utf8), file: "t.json")
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason else { throw error }
            #expect(issues.map(\.field) == ["oauth1.invalidateTokenURL"])
        }
    }

    /// A protocol parameter among the request-token call's extra parameters
    /// (sent in the query, besides the header's), or an `oauth_token` in an
    /// authorization URL (AuthKit adds the attempt's), passed
    /// `providers validate` and failed at sign-in.
    @Test func validatorRefusesProtocolParametersOutsideTheHeader() throws {
        let json = """
            {"id": "t", "protocol": "oauth1", "oauth1": {"requestTokenURL": "https://a.example/rt",
             "authorizeURL": "https://a.example/a?oauth%5Ftoken=x", "accessTokenURL": "https://a.example/at",
             "requestTokenParameters": {"oauth_callback": "oob", "x_auth_access_type": "read"}}}
            """
        #expect {
            _ = try DescriptorLoader().decode(Data(json.utf8), file: "t.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.map(\.field) == ["oauth1.authorizeURL", "oauth1.requestTokenParameters.oauth_callback"]
        }
    }
}
