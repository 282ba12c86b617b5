import AuthKit
import Foundation
import HTTPTypes
import Logging
import NIOCore

/// What every ``HTTPClient`` promises (see its documentation), played against
/// one transport by hostile servers. AuthKit's rules for credentials rest on
/// these promises, so each transport's tests run every clause: the default
/// one and `URLSessionHTTPClient` in AuthKitTests, AsyncHTTPClient's in its
/// own target.
///
/// ``check(_:)`` returns the promises a transport broke, in words (empty: it
/// kept them), so that the test that runs it reports them.
public struct TransportContract: Sendable {
    /// One promise, with the server that tests it.
    public enum Clause: Sendable, Hashable, CustomStringConvertible {
        /// Method, target, headers and body arrive as built; status, headers
        /// and body come back as sent.
        case sentAsBuilt
        /// A 500 is a response to read, not a thrown error.
        case errorStatusIsAResponse
        /// A 3xx comes back as the response, and its target hears nothing.
        case redirectComesBack(Int)
        /// An endless body ends at the size cap, and the transport stops reading.
        case floodEndsAtTheCap
        /// A body of one byte every 200 ms ends at the total deadline.
        case dripEndsAtTheDeadline
        /// A head that never ends is refused; memory stays bounded.
        case endlessHeadIsRefused
        /// A head sent one line every 200 ms ends at the total deadline.
        case headDripEndsAtTheDeadline
        /// A body cut off before its `Content-Length` is an error, not a short answer.
        case shortBodyIsAnError
        /// A chunked body cut off before its last chunk is an error.
        case unfinishedChunkedBodyIsAnError
        /// 2 GiB of zeros in 13 MB of gzip, sent though not asked for, is
        /// refused (unread, or at the cap while it inflates) in bounded memory.
        case gzipBombIsRefused
        /// 2 GiB of zeros in 64 KB of Zstandard, sent though not asked for,
        /// is refused at the cap while it decodes, or handed back as the
        /// 64 KB it was (a transport that does not decode it), in bounded memory.
        case zstdBombIsRefused
        /// The same in under 2 KB of Brotli.
        case brotliBombIsRefused
        /// A closed port is a network error that shows no query.
        case closedPortIsANetworkError
        /// A body whose reading task is cancelled part-way ends with an
        /// error, not as if it were complete: a stream's iterator ends
        /// quietly at its task's cancellation, and a half-read body read as
        /// whole (the libcurl and URLSession transports).
        case cancelledReadIsAnError
        /// A request sent from a task cancelled already is not sent, even
        /// on a connection kept open from an earlier request (where a
        /// transport may write it before any cancellation handler runs): a
        /// code exchange given up on would still spend the code.
        case cancelledTaskSendsNothing
        /// An interim response (`100 Continue`, sent unasked, or `103 Early
        /// Hints`) before the answer is skipped: the answer is the final response.
        case interimResponseIsSkipped(Int)
        /// Bytes with no status line (HTTP/0.9) are an error, not a 200.
        case missingStatusLineIsAnError
        /// A status that is not three digits (`2000`, `99999`, `20x`, `099`)
        /// is an error, not a crash (swift-http-types traps on a code outside
        /// 0...999) nor a body streamed to no one until the deadline.
        case malformedStatusIsAnError
        /// Two different `Content-Length`s make the framing unknowable: an
        /// error, never one of the two bodies (RFC 9112 §6.3).
        case conflictingLengthsAreAnError
        /// A `Content-Length` that is not a number (RFC 9110 §8.6: digits
        /// only; `-2`, `+2`, `0x2`, `2 2`) is an error too.
        case invalidLengthIsAnError
        /// A server that accepts the connection and never answers is ended
        /// by the total deadline.
        case silenceEndsAtTheDeadline
        /// An answer with no body (`204`, or `Content-Length: 0`) on a
        /// connection the server keeps open comes back at once, not at the
        /// deadline: revocation endpoints answer so.
        case emptyAnswerComesAtOnce(Int)
        /// The head comes back when it arrives, not with the end of a body
        /// still to come (a transport may hold it to hand over head and body
        /// together, as the default one does for a short answer, but only
        /// while the body is arriving).
        case headComesBeforeTheBody
        /// An https server whose certificate no CA vouches for (as a man in
        /// the middle's) is refused during the handshake: it receives no
        /// request, so no credential.
        case untrustedCertificateIsRefused
        /// The transport frames the body it sends: a `Content-Length` or
        /// `Transfer-Encoding` the caller set (a mistake, or an attempt to
        /// smuggle a second request into the connection) is not what the
        /// server goes by. Refusing such a request before sending is kept too.
        case framingIsTheTransports
        /// A `101 Switching Protocols` nobody asked for (AuthKit never sends
        /// `Upgrade`) is an error at once: what follows it is another
        /// protocol's bytes, not a body, even when they look like an answer.
        case switchedProtocolIsAnError
        /// A `Content-Length` beside `Transfer-Encoding: chunked` is an
        /// error (RFC 9112 §6.3), whichever of the two a reader would believe.
        case lengthBesideChunkedIsAnError
        /// Only a head's first line is its status line (RFC 9112 §2.1): a
        /// later line that looks like one (`HTTP/x 200 a: b`) starts no new
        /// head, so the fields before it still frame the body (a
        /// `Content-Length` beside `chunked` is still an error), and after
        /// a `100 Continue` the final head is still the one checked.
        case onlyAHeadsFirstLineIsAStatusLine
        /// A header line folded onto the next (obs-fold: a line that starts
        /// with a space) is one field, its parts joined by a space, or the
        /// answer is refused (RFC 9112 §5.2). Never the first part alone
        /// (a `WWW-Authenticate` without its `error`), nor the continuation
        /// read as a field of its own.
        case foldedFieldIsOneField
        /// A `401` with a `WWW-Authenticate` challenge (`Basic`, as a token
        /// endpoint answers `invalid_client`, RFC 6749 §5.2; `Bearer`, as a
        /// resource server does) comes back as the response: the transport
        /// neither answers the challenge itself nor waits for someone to.
        case challengeIsAResponse(String)

        public static let all: [Clause] = [
            .sentAsBuilt, .errorStatusIsAResponse,
            .redirectComesBack(301), .redirectComesBack(302), .redirectComesBack(303),
            .redirectComesBack(307), .redirectComesBack(308),
            .floodEndsAtTheCap, .dripEndsAtTheDeadline, .endlessHeadIsRefused, .headDripEndsAtTheDeadline,
            .shortBodyIsAnError, .unfinishedChunkedBodyIsAnError, .gzipBombIsRefused, .zstdBombIsRefused,
            .brotliBombIsRefused, .closedPortIsANetworkError, .cancelledReadIsAnError, .cancelledTaskSendsNothing,
            .interimResponseIsSkipped(100), .interimResponseIsSkipped(103), .missingStatusLineIsAnError,
            .malformedStatusIsAnError, .conflictingLengthsAreAnError,
            .invalidLengthIsAnError, .silenceEndsAtTheDeadline, .untrustedCertificateIsRefused,
            .emptyAnswerComesAtOnce(204), .emptyAnswerComesAtOnce(200), .headComesBeforeTheBody,
            .framingIsTheTransports,
            .switchedProtocolIsAnError,
            .lengthBesideChunkedIsAnError, .onlyAHeadsFirstLineIsAStatusLine, .foldedFieldIsOneField,
            .challengeIsAResponse("Basic"),
            .challengeIsAResponse("Digest"), .challengeIsAResponse("Bearer"),
        ]

        public var description: String {
            switch self {
            case .redirectComesBack(let status): "redirectComesBack(\(status))"
            case .sentAsBuilt: "sentAsBuilt"
            case .errorStatusIsAResponse: "errorStatusIsAResponse"
            case .floodEndsAtTheCap: "floodEndsAtTheCap"
            case .dripEndsAtTheDeadline: "dripEndsAtTheDeadline"
            case .endlessHeadIsRefused: "endlessHeadIsRefused"
            case .headDripEndsAtTheDeadline: "headDripEndsAtTheDeadline"
            case .shortBodyIsAnError: "shortBodyIsAnError"
            case .unfinishedChunkedBodyIsAnError: "unfinishedChunkedBodyIsAnError"
            case .gzipBombIsRefused: "gzipBombIsRefused"
            case .zstdBombIsRefused: "zstdBombIsRefused"
            case .brotliBombIsRefused: "brotliBombIsRefused"
            case .closedPortIsANetworkError: "closedPortIsANetworkError"
            case .cancelledReadIsAnError: "cancelledReadIsAnError"
            case .cancelledTaskSendsNothing: "cancelledTaskSendsNothing"
            case .interimResponseIsSkipped(let status): "interimResponseIsSkipped(\(status))"
            case .missingStatusLineIsAnError: "missingStatusLineIsAnError"
            case .malformedStatusIsAnError: "malformedStatusIsAnError"
            case .conflictingLengthsAreAnError: "conflictingLengthsAreAnError"
            case .invalidLengthIsAnError: "invalidLengthIsAnError"
            case .silenceEndsAtTheDeadline: "silenceEndsAtTheDeadline"
            case .untrustedCertificateIsRefused: "untrustedCertificateIsRefused"
            case .framingIsTheTransports: "framingIsTheTransports"
            case .switchedProtocolIsAnError: "switchedProtocolIsAnError"
            case .lengthBesideChunkedIsAnError: "lengthBesideChunkedIsAnError"
            case .onlyAHeadsFirstLineIsAStatusLine: "onlyAHeadsFirstLineIsAStatusLine"
            case .foldedFieldIsOneField: "foldedFieldIsOneField"
            case .challengeIsAResponse(let scheme): "challengeIsAResponse(\(scheme))"
            case .emptyAnswerComesAtOnce(let status): "emptyAnswerComesAtOnce(\(status))"
            case .headComesBeforeTheBody: "headComesBeforeTheBody"
            }
        }
    }

    private let http: any HTTPClient
    /// Status lines `malformedStatusIsAnError` leaves out for this
    /// transport, each for a reason outside AuthKit (see the caller).
    private let statusLinesNotPlayed: Set<String>
    /// The transport tries a connection that failed again until its connect
    /// timeout (AsyncHTTPClient's pool): a closed port or an untrusted
    /// certificate may then be said as the time running out.
    private let retriesConnections: Bool

    public init(_ http: any HTTPClient, statusLinesNotPlayed: Set<String> = [], retriesConnections: Bool = false) {
        self.http = http
        self.statusLinesNotPlayed = statusLinesNotPlayed
        self.retriesConnections = retriesConnections
    }

    /// The size cap and total deadline the clauses send under: 2 s where the
    /// deadline is what must end the request, 30 s elsewhere, so that the
    /// transport's own error comes first even with every suite running at
    /// once on two cores.
    static let policy = RequestPolicy(redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(30))
    static let shortDeadline = RequestPolicy(redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(2))
    /// How much the process's peak memory may grow during a clause: far below
    /// what holding a flood, an endless head or a bomb would take, and above
    /// what the other tests running beside it use.
    static let memoryAllowance = 256 << 20

    public func check(_ clause: Clause) async throws -> [String] {
        switch clause {
        case .sentAsBuilt: try await sentAsBuilt()
        case .errorStatusIsAResponse: try await errorStatusIsAResponse()
        case .redirectComesBack(let status): try await redirectComesBack(status)
        case .floodEndsAtTheCap: try await floodEndsAtTheCap()
        case .dripEndsAtTheDeadline: try await dripEndsAtTheDeadline()
        case .endlessHeadIsRefused:
            try await refused(Self.json200("", repeating: "X-Flood: \(String(repeating: "a", count: 1000))\r\n"))
        case .headDripEndsAtTheDeadline:
            try await refused(
                Self.json200("", repeating: "X-Drip: a\r\n", interval: .milliseconds(200)), byTheDeadline: true)
        case .shortBodyIsAnError:
            try await refused(Self.json200("Content-Length: 100\r\n\r\n{\"access_token\":\"at"))
        case .unfinishedChunkedBodyIsAnError:
            try await refused(Self.json200("Transfer-Encoding: chunked\r\n\r\n10\r\n{\"access_token\":\r\n"))
        case .gzipBombIsRefused: try await bombIsRefused("gzip", GzipBomb.make(inflatedSize: 2 << 30))
        case .zstdBombIsRefused: try await bombIsRefused("zstd", ZstdBomb.make(inflatedSize: 2 << 30))
        case .brotliBombIsRefused: try await bombIsRefused("br", BrotliBomb.make(inflatedSize: 2 << 30))
        case .closedPortIsANetworkError: try await closedPortIsANetworkError()
        case .cancelledReadIsAnError: try await cancelledReadIsAnError()
        case .cancelledTaskSendsNothing: try await cancelledTaskSendsNothing()
        case .interimResponseIsSkipped(let status): try await interimResponseIsSkipped(status)
        case .missingStatusLineIsAnError:
            try await refused(
                RawResponseServer.Script(head: "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\"}\r\n"))
        case .conflictingLengthsAreAnError:
            try await refused(
                Self.json200("Content-Length: 2\r\nContent-Length: 24\r\n\r\n{}\"access_token\":\"at-1\"}"))
        case .invalidLengthIsAnError: try await invalidLengthIsAnError()
        case .silenceEndsAtTheDeadline:
            try await refused(
                RawResponseServer.Script(head: "", repeating: "", interval: .hours(1)), byTheDeadline: true)
        case .untrustedCertificateIsRefused: try await untrustedCertificateIsRefused()
        case .framingIsTheTransports: try await framingIsTheTransports()
        case .lengthBesideChunkedIsAnError: try await lengthBesideChunkedIsAnError()
        case .onlyAHeadsFirstLineIsAStatusLine: try await onlyAHeadsFirstLineIsAStatusLine()
        case .switchedProtocolIsAnError:
            // The connection then stays open: only the 101 itself can end the wait.
            try await refused(
                RawResponseServer.Script(
                    head: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
                        + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{\"access_token\":\"at-1\"}",
                    repeating: "", interval: .hours(1)))
        case .emptyAnswerComesAtOnce(let status): try await emptyAnswerComesAtOnce(status)
        case .headComesBeforeTheBody: try await headComesBeforeTheBody()
        case .foldedFieldIsOneField: try await foldedFieldIsOneField()
        case .challengeIsAResponse(let scheme): try await challengeIsAResponse(scheme)
        case .malformedStatusIsAnError: try await malformedStatusIsAnError()
        }
    }

    /// Status lines with no three-digit code, each refused.
    private func malformedStatusIsAnError() async throws -> [String] {
        // libcurl refuses `2000` itself, but reads `HTTP/2 99999` (an
        // HTTP/2-style line on an HTTP/1.1 connection) without a bound:
        // that code trapped in HTTPResponse.Status and stopped the
        // process. `20x` and `099` it takes as a head the transport did
        // not: its 2 MiB body went to no reader until the deadline.
        let body = String(repeating: " ", count: 2 << 20)
        var broken: [String] = []
        for line in ["HTTP/1.1 2000 OK", "HTTP/2 99999 OK", "HTTP/2 20x OK", "HTTP/1.1 099 OK"]
        where !statusLinesNotPlayed.contains(line) {
            broken += try await refused(
                RawResponseServer.Script(
                    head:
                        "\(line)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count + 2)\r\n\r\n{}\(body)"
                )
            ).map { "\(line): \($0)" }
        }
        return broken
    }

    /// Lengths that are not `1*DIGIT` (RFC 9110 §8.6). libcurl read `+2` as
    /// 2, `0x2` as 0 and `2 2` as 2, and the answer came back framed by a
    /// length the server never wrote.
    private func invalidLengthIsAnError() async throws -> [String] {
        var broken: [String] = []
        for value in ["-2", "+2", "0x2", "2 2"] {
            broken += try await refused(Self.json200("Content-Length: \(value)\r\n\r\n{}"))
                .map { "Content-Length: \(value): \($0)" }
        }
        return broken
    }

    /// A length beside chunked framing, with or without a line of spaces between.
    private func lengthBesideChunkedIsAnError() async throws -> [String] {
        // The chunk is 0x17 bytes: {"access_token":"at-1"}. And with a
        // line of spaces between the two fields, which does not end a
        // head: taken for its end, the Transfer-Encoding after it went
        // unchecked (read as a trailer) while libcurl framed the body by it.
        var broken: [String] = []
        for fields in ["Content-Length: 2\r\n", "Content-Length: 2\r\n \r\n", "Content-Length: 2\r\n\t\r\n"] {
            broken += try await refused(
                Self.json200(
                    fields
                        + "Transfer-Encoding: chunked\r\n\r\n17\r\n{\"access_token\":\"at-1\"}\r\n0\r\n\r\n")
            ).map { "\(fields.debugDescription): \($0)" }
        }
        return broken
    }

    /// A line shaped as a status line inside a head, where libcurl reads it
    /// as a header field: taken for a new head, it wiped the fields before
    /// it (a length beside chunked framing went unchecked while libcurl
    /// framed the body by them), and inside a `100 Continue` it ended the
    /// head as a final 200 and the real final head was read as trailers.
    private func onlyAHeadsFirstLineIsAStatusLine() async throws -> [String] {
        let chunked = "17\r\n{\"access_token\":\"at-1\"}\r\n0\r\n\r\n"
        var broken = try await refused(
            Self.json200("Content-Length: 2\r\nTransfer-Encoding: chunked\r\nHTTP/x 200 a: b\r\n\r\n" + chunked)
        ).map { "after the framing fields: \($0)" }
        broken += try await refused(
            RawResponseServer.Script(
                head: "HTTP/1.1 100 Continue\r\nHTTP/x 200 a: b\r\nX-Seen-By-AuthKit: fake\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n"
                    + "Content-Type: application/json\r\n\r\n" + chunked)
        ).map { "inside a 100 Continue: \($0)" }
        return broken
    }

    /// A raw answer that starts `HTTP/1.1 200 OK` with a JSON content type;
    /// `rest` is the remaining header lines, the blank line and the body.
    public static func json200(_ rest: String, repeating: String? = nil, interval: TimeAmount = .zero)
        -> RawResponseServer.Script
    {
        RawResponseServer.Script(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + rest, repeating: repeating,
            interval: interval)
    }

    private var transport: FlowTransport { FlowTransport(http: http, logger: Logger(label: "transport-contract")) }

    private func sentAsBuilt() async throws -> [String] {
        try await withServer { server in
            let body = Data("grant_type=authorization_code&code=a%2Bb%20c&empty=".utf8)
            let answer = Data("{\"access_token\":\"at-1\",\"note\":\"\u{00e9}\u{1f511}\"}".utf8)
            server.route("POST", "/token") { _ in
                StubResponse(
                    status: 201, headers: [("Content-Type", "application/json"), ("X-Answer", "as sent")], body: answer)
            }
            var request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token?x=a%2Fb&y=%20")!)
            request.head.headerFields[.contentType] = "application/x-www-form-urlencoded"
            request.head.headerFields[.accept] = "application/json"
            request.head.headerFields[.authorization] = "Basic YXBwOnNlY3JldA=="
            request.head.headerFields[HTTPField.Name("X-Custom")!] = "one, two"
            // An empty value is a value (libcurl drops a header given as "Name:").
            request.head.headerFields[HTTPField.Name("X-Empty")!] = ""
            request.body = body
            let response = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
            var broken: [String] = []
            guard let sent = server.requests.first else { return ["the server received no request"] }
            if sent.method != "POST" { broken.append("sent method \(sent.method), not POST") }
            if sent.uri != "/token?x=a%2Fb&y=%20" { broken.append("sent target \(sent.uri), not /token?x=a%2Fb&y=%20") }
            for (name, value) in [
                ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
                ("Authorization", "Basic YXBwOnNlY3JldA=="), ("X-Custom", "one, two"),
            ]
            where sent.header(name) != value {
                broken.append("sent \(name): \(sent.header(name) ?? "nothing"), not \(value)")
            }
            // Added by FlowTransport when the caller set none: GitHub refuses requests without one.
            if sent.header("User-Agent") != AuthKitVersion.userAgent {
                broken.append(
                    "sent User-Agent: \(sent.header("User-Agent") ?? "nothing"), not \(AuthKitVersion.userAgent)")
            }
            if sent.header("X-Empty") != "" {
                broken.append("sent X-Empty: \(sent.header("X-Empty") ?? "nothing"), not an empty value")
            }
            if sent.header("Cookie") != nil { broken.append("sent a Cookie header no one set") }
            if sent.body != body {
                broken.append("sent body \(sent.bodyText), not \(String(decoding: body, as: UTF8.self))")
            }
            if response.status != 201 { broken.append("returned status \(response.status), not 201") }
            if response.headers[HTTPField.Name("X-Answer")!] != "as sent" {
                broken.append("lost the response header X-Answer")
            }
            if response.body != answer {
                broken.append("returned body \(String(decoding: response.body, as: UTF8.self)), not the bytes sent")
            }
            return broken
        }
    }

    private func framingIsTheTransports() async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json("{}") }
            let body = Data("grant_type=authorization_code&code=the-code".utf8)
            var broken: [String] = []
            for (name, value) in [
                ("Content-Length", "3"), ("Content-Length", "1000"), ("Transfer-Encoding", "chunked"),
                // The URL's authority is the host the request goes to, and the
                // only one it names (RFC 9112 §3.2): a virtual host the caller
                // named would route a credential to another tenant of the
                // server the URL's origin check allowed.
                ("Host", "other-tenant.example"),
            ] {
                var request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
                request.head.headerFields[.contentType] = "application/x-www-form-urlencoded"
                request.head.headerFields[HTTPField.Name(name)!] = value
                request.body = body
                let before = server.requests.count
                var shortPolicy = Self.policy
                shortPolicy.deadline = .seconds(5) // a server waiting for 1000 bytes never answers
                do {
                    _ = try await transport.send(request, step: .tokenExchange, policy: shortPolicy)
                } catch {
                    if server.requests.count > before {
                        broken.append("with \(name): \(value) from the caller, failed (\(error)) after sending")
                    }
                    continue
                }
                let received = server.requests.dropFirst(before)
                let authority = URL(string: server.baseURL)!.host.map { "\($0):\(URL(string: server.baseURL)!.port!)" }
                if let host = received.first?.header("Host"), host != authority {
                    broken.append("with \(name): \(value) from the caller, the server was sent Host: \(host)")
                }
                if received.count != 1 || received.first?.body != body {
                    broken.append(
                        "with \(name): \(value) from the caller, the server read \(received.map { "'\($0.bodyText)'" }.joined(separator: " and ")), not the body"
                    )
                }
            }
            // A POST with no body says so (`Content-Length: 0`, RFC 9110
            // §8.6): sent without framing, some servers answer 411 Length
            // Required (`authkit request -X POST` with no -d; libcurl's did).
            let before = server.requests.count
            let empty = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            _ = try? await transport.send(empty, step: .tokenExchange, policy: Self.policy)
            let sent = server.requests.dropFirst(before).first
            if sent?.header("Content-Length") != "0" {
                broken.append(
                    "a POST with no body was sent with Content-Length \(sent?.header("Content-Length") ?? "absent"), not 0"
                )
            }
            // Nor with a type the caller did not give (libcurl's form type).
            if let type = sent?.header("Content-Type") {
                broken.append("a POST with no body and no type was sent Content-Type: \(type)")
            }
            return broken
        }
    }

    private func errorStatusIsAResponse() async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"error":"server_error"}"#, status: 500) }
            let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            do {
                let response = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
                var broken: [String] = []
                if response.status != 500 { broken.append("returned status \(response.status) for a 500") }
                if response.body != Data(#"{"error":"server_error"}"#.utf8) { broken.append("lost the body of a 500") }
                return broken
            } catch {
                return ["threw for a 500 instead of returning it: \(error)"]
            }
        }
    }

    private func redirectComesBack(_ status: Int) async throws -> [String] {
        try await withServer { server in
            let elsewhere = TestHTTPServer(host: "127.0.0.2")
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            elsewhere.route("POST", "/token") { _ in .json(#"{"access_token":"stolen"}"#) }
            elsewhere.route("GET", "/token") { _ in .json(#"{"access_token":"stolen"}"#) }
            server.route("POST", "/token") { _ in .redirect(status, to: "\(elsewhere.baseURL)/token") }
            var head = HTTPRequest(
                method: .post, scheme: "http", authority: "\(server.host):\(server.port)", path: "/token")
            head.headerFields[.authorization] = "Basic YXBwOnNlY3JldA=="
            let (response, body) = try await http.send(head, body: Data("code=the-code".utf8))
            // Read to the end, so that a transport that follows has the time to.
            var received = Data()
            for try await chunk in body { received += chunk }
            var broken: [String] = []
            if received != Data("moved".utf8) {
                broken.append("returned the body \(String(decoding: received, as: UTF8.self)) for a \(status)")
            }
            if response.status.code != status {
                broken.append("returned \(response.status.code) for a \(status): it followed the redirect")
            }
            if response.headerFields[.location] != "\(elsewhere.baseURL)/token" {
                broken.append("lost the Location of a \(status)")
            }
            if !elsewhere.requests.isEmpty {
                broken.append("sent the request on to \(elsewhere.baseURL) after a \(status)")
            }
            return broken
        }
    }

    private func floodEndsAtTheCap() async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in .streaming(.flood, headers: [("Content-Type", "application/json")]) }
            let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            let before = ProcessMemory.peak
            var broken = await expect(tooLarge: "\(server.baseURL)/token") {
                _ = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
            }
            broken += memoryStayedBounded(since: before, reading: "an endless body")
            broken += await stoppedReading(after: "it gave up on an endless body") { server.bytesStreamed }
            return broken
        }
    }

    private func dripEndsAtTheDeadline() async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in .streaming(.drip(), headers: [("Content-Type", "application/json")]) }
            let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            return await expectDeadline {
                _ = try await transport.send(request, step: .tokenExchange, policy: Self.shortDeadline)
            }
        }
    }

    /// Plays `script` and expects a network error (or, `byTheDeadline`, the
    /// one the total deadline gives), with memory bounded and the server no
    /// longer read from afterwards.
    private func refused(_ script: RawResponseServer.Script, byTheDeadline: Bool = false) async throws -> [String] {
        let server = RawResponseServer(script)
        try await server.start()
        let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
        let before = ProcessMemory.peak
        let policy = byTheDeadline ? Self.shortDeadline : Self.policy
        let send: @Sendable () async throws -> Void = { [transport] in
            _ = try await transport.send(request, step: .tokenExchange, policy: policy)
        }
        var broken = byTheDeadline ? await expectDeadline(send) : await expectNetworkError(send)
        broken += memoryStayedBounded(since: before, reading: "what the server sent")
        broken += await stoppedReading(after: "it gave up") { server.bytesWritten }
        await server.stop()
        return broken
    }

    /// 2 GiB of zeros, compressed as `encoding`, answer a token request
    /// that asked for no compression. Decoding must stop at the size cap;
    /// a transport that does not decode may hand back the compressed bytes
    /// as they came (they are within the cap and parse as nothing).
    private func bombIsRefused(_ encoding: String, _ bomb: Data) async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                StubResponse(
                    status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", encoding)],
                    body: bomb)
            }
            let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            let before = ProcessMemory.peak
            var broken: [String] = []
            do {
                let response = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
                if response.body != bomb || bomb.count > Self.policy.maximumBodySize {
                    broken.append("returned \(response.body.count) bytes of a 2 GiB \(encoding) bomb as the answer")
                }
            } catch let error as AuthKitError where Self.isSizeOrNetwork(error) {
                // refused at the cap while inflating, or refused unread
            } catch {
                broken.append("a \(encoding) bomb ended with \(error), not a size or network error")
            }
            broken += memoryStayedBounded(since: before, reading: "a 2 GiB \(encoding) bomb")
            return broken
        }
    }

    private func interimResponseIsSkipped(_ status: Int) async throws -> [String] {
        let answer = #"{"access_token":"at-1"}"#
        let interim =
            status == 103
            ? "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            : "HTTP/1.1 \(status) Continue\r\n\r\n"
        return try await expectAnswer(
            200, Data(answer.utf8), after: "a \(status) before the answer",
            to: RawResponseServer.Script(
                head: interim
                    + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n\(answer)"
            ))
    }

    private func foldedFieldIsOneField() async throws -> [String] {
        let server = RawResponseServer(
            RawResponseServer.Script(
                head: "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                    + "WWW-Authenticate: Bearer realm=\"api\",\r\n error=\"invalid_token\"\r\n"
                    + "X-Note: one\r\n\tX-Injected: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"))
        try await server.start()
        defer { Task { await server.stop() } }
        let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
        let response: IncomingResponse
        do {
            response = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
        } catch let error as AuthKitError {
            guard case .network = error.reason else {
                return ["folded header lines ended with \(error), not an answer or a network error"]
            }
            return [] // refused: allowed
        } catch {
            return ["folded header lines ended with \(error), not an answer or a network error"]
        }
        // One or more spaces may stand where each fold was.
        func unfolded(_ name: String) -> String? {
            response.headers[HTTPField.Name(name)!].map {
                $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            }
        }
        var broken: [String] = []
        if unfolded("WWW-Authenticate") != #"Bearer realm="api", error="invalid_token""# {
            broken.append(
                "returned WWW-Authenticate: \(response.headers[.wwwAuthenticate] ?? "nothing") for a field folded onto two lines"
            )
        }
        if unfolded("X-Note") != "one X-Injected: yes" {
            broken.append(
                "returned X-Note: \(response.headers[HTTPField.Name("X-Note")!] ?? "nothing") for a field folded onto two lines"
            )
        }
        if response.headers[HTTPField.Name("X-Injected")!] != nil {
            broken.append("read a folded line (X-Injected) as a field of its own")
        }
        return broken
    }

    private func challengeIsAResponse(_ scheme: String) async throws -> [String] {
        let answer = #"{"error":"invalid_client"}"#
        // The connection stays open after the answer, as a kept-alive one does.
        return try await expectAnswer(
            401, Data(answer.utf8), after: "a 401 with a \(scheme) challenge",
            to: RawResponseServer.Script(
                head:
                    "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nWWW-Authenticate: \(scheme) realm=\"sandbox\"\r\n"
                    + "Content-Length: \(answer.utf8.count)\r\n\r\n\(answer)", repeating: "", interval: .hours(1)),
            policy: Self.policy)
    }

    private func emptyAnswerComesAtOnce(_ status: Int) async throws -> [String] {
        let head =
            status == 204 ? "HTTP/1.1 204 No Content\r\n\r\n" : "HTTP/1.1 \(status) OK\r\nContent-Length: 0\r\n\r\n"
        // Zero bytes an hour apart: the connection stays open, as a kept-alive
        // one does. A transport that waits for a body that never comes ends at
        // the deadline, with an error.
        return try await expectAnswer(
            status, Data(), after: "an empty \(status)",
            to: RawResponseServer.Script(
                head: head, repeating: "", interval: .hours(1)))
    }

    private func headComesBeforeTheBody() async throws -> [String] {
        // The head and the body's first byte; the other 99 never come (zero
        // bytes an hour apart keep the connection open).
        let server = RawResponseServer(
            .init(
                head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
                repeating: "", interval: .hours(1)))
        try await server.start()
        defer { Task { await server.stop() } }
        let request = HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/api")!)
        // The body never ends, so a transport that waits for it reaches the
        // deadline whatever its length: a long one spares a loaded machine.
        do {
            let (head, body) = try await withDeadline(.seconds(15), display: "the test's server") { [http] in
                try await http.send(request, body: nil)
            }
            body.cancel()
            var broken: [String] = []
            if head.status.code != 200 { broken.append("returned status \(head.status.code), not 200") }
            return broken
        } catch {
            return ["a head whose body is still to come ended with \(error), not with the head at once"]
        }
    }

    /// Plays `script` to a request and expects `status` and `body` back.
    private func expectAnswer(
        _ status: Int, _ body: Data, after what: String, to script: RawResponseServer.Script,
        policy: RequestPolicy = Self.policy
    ) async throws -> [String] {
        let server = RawResponseServer(script)
        try await server.start()
        defer { Task { await server.stop() } }
        let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
        do {
            let response = try await transport.send(request, step: .tokenExchange, policy: policy)
            var broken: [String] = []
            if response.status != status {
                broken.append("returned status \(response.status) after \(what), not \(status)")
            }
            if response.body != body {
                broken.append("returned body \(String(decoding: response.body, as: UTF8.self)) after \(what)")
            }
            return broken
        } catch {
            return ["\(what) ended with \(error)"]
        }
    }

    private func untrustedCertificateIsRefused() async throws -> [String] {
        let server = try RawResponseServer(
            Self.json200("Content-Length: 24\r\n\r\n{\"access_token\":\"stolen\"}"),
            tls: await SelfSignedCertificate.make())
        try await server.start()
        defer { Task { await server.stop() } }
        var outgoing = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token?code=secret-code")!)
        outgoing.head.headerFields[.authorization] = "Basic YXBwOnNlY3JldA=="
        outgoing.body = Data("code=secret-code".utf8)
        let request = outgoing
        let send: @Sendable () async throws -> Void = { [transport] in
            _ = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
        }
        var broken = await expectNetworkError(send)
        // Said as what it is, as every transport says it (AsyncHTTPClient's
        // said "no connection", after trying again for 10 s).
        do {
            try await send()
        } catch let error as AuthKitError {
            if case .network(_, let reason) = error.reason,
                reason.kind != .tlsFailure && !(retriesConnections && reason.kind == .timedOut)
            {
                broken.append("an untrusted certificate was said as \(reason.kind), not tlsFailure: \(reason.detail)")
            }
        } catch {}
        if server.bytesReceived > 0 {
            broken.append("sent \(server.bytesReceived) bytes of the request to a server it could not trust")
        }
        return broken
    }

    private func cancelledReadIsAnError() async throws -> [String] {
        // One byte of a hundred, and the connection held open.
        let server = RawResponseServer(
            Self.json200("Content-Length: 100\r\n\r\n{", repeating: "", interval: .hours(1)))
        try await server.start()
        defer { Task { await server.stop() } }
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/")
        let (_, body) = try await http.send(request, body: nil)
        let reader = Task { () -> String? in
            var count = 0
            do {
                for try await chunk in body {
                    count += chunk.count
                    withUnsafeCurrentTask { $0?.cancel() }
                }
                return "ended as if complete after \(count) of 100 bytes"
            } catch {
                return nil
            }
        }
        let outcome = await reader.value
        return outcome.map { ["a body whose reader was cancelled part-way \($0)"] } ?? []
    }

    private func cancelledTaskSendsNothing() async throws -> [String] {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at-1","token_type":"Bearer"}"#) }
            let url = URL(string: "\(server.baseURL)/token")!
            let request = HTTPRequest(
                method: .post, scheme: "http", authority: url.host! + ":\(url.port!)", path: "/token")
            // The connection is made and kept open by a first request.
            let (_, first) = try await http.send(request, body: Data("code=first".utf8))
            for try await _ in first {}
            let http = self.http
            let cancelled = Task { () -> String? in
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    let (response, _) = try await http.send(request, body: Data("code=second".utf8))
                    return "a cancelled task's request was answered \(response.status.code)"
                } catch {
                    return nil
                }
            }
            var broken = await cancelled.value.map { [$0] } ?? []
            // Anything sent would have arrived by now.
            try await Task.sleep(for: .milliseconds(300))
            if server.requests.count != 1 {
                broken.append("the server received \(server.requests.count) requests, not only the first")
            }
            return broken
        }
    }

    /// Refused at once, and said so: not a timeout. (AsyncHTTPClient's pool
    /// tried again with back-off until its 10 s connect timeout, and the
    /// failure was said as the time running out.)
    private func closedPortIsANetworkError() async throws -> [String] {
        let request = OutgoingRequest(method: .post, url: URL(string: "http://127.0.0.1:9/token?code=secret-code")!)
        do {
            _ = try await transport.send(request, step: .tokenExchange, policy: Self.policy)
            return ["a closed port answered"]
        } catch let error as AuthKitError {
            guard case .network(let url, let reason) = error.reason else {
                return ["a closed port ended with \(error), not a network error"]
            }
            if url.contains("secret-code") { return ["the error shows the query: \(url)"] }
            if reason.kind == .connectionFailed || (retriesConnections && reason.kind == .timedOut) { return [] }
            return ["a closed port was said as \(reason.kind): \(reason.detail)"]
        } catch {
            return ["a closed port ended with \(error), not a network error"]
        }
    }

    // MARK: - Expectations, in words

    private static func isSizeOrNetwork(_ error: AuthKitError) -> Bool {
        switch error.reason {
        case .responseTooLarge, .network: true
        default: false
        }
    }

    private func expect(tooLarge url: String, _ send: @Sendable () async throws -> Void) async -> [String] {
        do {
            try await send()
            return ["returned an answer from an endless body"]
        } catch let error as AuthKitError {
            guard case .responseTooLarge(let at, let limit) = error.reason, at == url && limit == 1 << 20 else {
                return ["an endless body ended with \(error), not responseTooLarge at 1 MiB"]
            }
            return []
        } catch {
            return ["an endless body ended with \(error), not responseTooLarge at 1 MiB"]
        }
    }

    /// A network error of the transport's own (not the 30 s deadline's).
    private func expectNetworkError(_ send: @Sendable () async throws -> Void) async -> [String] {
        await expectFailure(send, within: "a network error of its own") { reason in
            reason.detail.contains("within 30 s") ? "ended only by the 30 s deadline, without an error of its own" : nil
        }
    }

    /// The error the 2 s deadline gives.
    private func expectDeadline(_ send: @Sendable () async throws -> Void) async -> [String] {
        await expectFailure(send, within: "the 2 s deadline's error") { reason in
            reason.kind == .timedOut && reason.detail.contains("within 2 s")
                ? nil : "ended with '\(reason)', not by the 2 s deadline"
        }
    }

    /// `send` must throw ``AuthKitError/network(url:reason:)`` whose reason
    /// `wrong` finds nothing wrong with, well before the 30 s deadline
    /// (loosely: the suites run in parallel on two cores).
    private func expectFailure(
        _ send: @Sendable () async throws -> Void, within what: String,
        _ wrong: (AuthKitError.NetworkFailure) -> String?
    ) async -> [String] {
        let started = ContinuousClock.now
        do {
            try await send()
            return ["returned an answer instead of \(what)"]
        } catch let error as AuthKitError {
            guard case .network(_, let reason) = error.reason else { return ["ended with \(error), not \(what)"] }
            if let problem = wrong(reason) { return [problem] }
            let elapsed = ContinuousClock.now - started
            return elapsed < .seconds(15) ? [] : ["took \(elapsed) to end with \(what)"]
        } catch {
            return ["ended with \(error), not \(what)"]
        }
    }

    private func memoryStayedBounded(since before: Int, reading what: String) -> [String] {
        let growth = ProcessMemory.peak - before
        return growth < Self.memoryAllowance ? [] : ["peak memory grew by \(growth >> 20) MiB reading \(what)"]
    }

    /// `written` must stop growing once the transport has given up: more
    /// than the socket buffers hold means it is still reading.
    private func stoppedReading(after what: String, _ written: @Sendable () -> Int) async -> [String] {
        try? await Task.sleep(for: .milliseconds(300))
        let settled = written()
        try? await Task.sleep(for: .milliseconds(700))
        let later = written()
        return later - settled <= 8 << 20
            ? [] : ["took \((later - settled) >> 20) MiB more in the second after \(what)"]
    }
}

/// The process's memory, as the kernel counts it.
public enum ProcessMemory {
    /// Peak resident memory (`VmHWM`), in bytes; 0 where `/proc` has none.
    public static var peak: Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
