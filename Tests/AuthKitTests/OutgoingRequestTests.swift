import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

/// ``OutgoingRequest`` keeps its parts in one shared reference, copied on
/// write: a copy changed must leave the request it came from as it was, or
/// a redirect's re-signed head, a retried request's nonce or a retarget
/// would leak into the request the caller still holds.
@Suite struct OutgoingRequestTests {
    @Test func aCopyChangedLeavesTheOriginalAsItWas() throws {
        let url = try #require(URL(string: "https://api.example/items?page=2"))
        var original = OutgoingRequest(method: .post, url: url)
        original.setHeader("Accept", "application/json")
        original.body = Data("a=1".utf8)
        original.secrets = ["s1"]

        var copy = original
        copy.setHeader("Authorization", "Bearer t")
        copy.body = Data("b=2".utf8)
        copy.secrets.append("t")
        copy.displayURL = "elsewhere"
        copy.retarget(try #require(URL(string: "https://other.example/next")))

        #expect(original.header("Authorization") == nil)
        #expect(original.header("Accept") == "application/json")
        #expect(original.body == Data("a=1".utf8))
        #expect(original.secrets == ["s1"])
        #expect(original.url == url && original.head.url == url)
        #expect(original.target.origin == "https://api.example")
        #expect(original.displayURL == url.redactedForLogs)

        #expect(copy.header("Authorization") == "Bearer t" && copy.header("Accept") == "application/json")
        #expect(copy.body == Data("b=2".utf8) && copy.secrets == ["s1", "t"])
        #expect(copy.url.absoluteString == "https://other.example/next")
        #expect(copy.target.origin == "https://other.example")
    }

    /// A request no other value shares is changed in place: its storage is
    /// not copied at every header set (the point of the shared reference).
    @Test func anUnsharedRequestChangesInPlace() throws {
        var request = OutgoingRequest(method: .get, url: try #require(URL(string: "https://api.example/")))
        let before = request.storageIdentity
        request.setHeader("Accept", "application/json")
        request.body = Data("x".utf8)
        #expect(request.storageIdentity == before)
        let copy = request
        request.setHeader("Accept", "text/plain")
        #expect(request.storageIdentity != before && copy.storageIdentity == before)
    }
}
