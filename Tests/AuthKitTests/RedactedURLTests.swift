import Foundation
import Testing

@testable import AuthKit

/// ``Foundation/URL/redactedForLogs`` cuts a URL's text at its query or
/// fragment instead of taking it apart with `URLComponents`: the two must
/// say the same of every URL, or a log line could show a query (a secret
/// some providers put there) or misname where a request went.
@Suite struct RedactedURLTests {
    /// Every combination of the parts a URL may have, each written several
    /// ways (escapes, upper case, IPv6, empty query and fragment, `?` and
    /// `#` inside a query or fragment, `@` in a path).
    static let urls: [String] = {
        let schemes = ["https", "http", "HTTPS", "custom+app"]
        let users = ["", "user@", "user:pass@", "us%40er:p%3Fw@", ":@"]
        let hosts = ["api.example", "API.Example.COM", "127.0.0.1", "[::1]", "xn--bcher-kva.example", "h"]
        let ports = ["", ":8443", ":443", ":0"]
        let paths = ["", "/", "/v1/items", "/a@b/c", "/%3F%23/x", "/a;b=c/d", "/é"]
        let queries = ["", "?", "?page=2", "?a=1&b=%3F&c=?x", "?code=secret#frag", "?x#y?z"]
        let fragments = ["", "#", "#top", "#a?b"]
        var urls: [String] = []
        for scheme in schemes {
            for user in users {
                for host in hosts {
                    for port in ports {
                        for path in paths {
                            for query in queries {
                                for fragment in fragments {
                                    urls.append(scheme + "://" + user + host + port + path + query + fragment)
                                }
                            }
                        }
                    }
                }
            }
        }
        return urls + ["mailto:someone@example.com?subject=x", "urn:ietf:rfc:3986#x", "file:///tmp/a?b"]
    }()

    @Test func cuttingTheTextSaysWhatTakingTheURLApartSays() {
        var compared = 0
        for text in Self.urls {
            guard let url = URL(string: text) else { continue }
            compared += 1
            let fast = url.redactedForLogs
            let reference = url.redactedThroughComponents
            #expect(fast == reference, "\(text)")
            if fast != reference { return }
        }
        // Most of the generated URLs parse: the comparison covered them.
        #expect(compared > Self.urls.count / 2)
    }

    @Test func aQueryOrFragmentNeverAppears() throws {
        let url = try #require(URL(string: "https://u:p@api.example:8443/v1/items?code=secret&x=1#frag"))
        #expect(url.redactedForLogs == "https://api.example:8443/v1/items?…")
        let fragmentOnly = try #require(URL(string: "https://api.example/v1#secret"))
        #expect(fragmentOnly.redactedForLogs == "https://api.example/v1")
        let relative = try #require(URL(string: "items?token=t", relativeTo: URL(string: "https://api.example/v1/")))
        #expect(!relative.redactedForLogs.contains("token"))
    }
}
