import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How both flow engines, and every authorized request, are sent: through the
/// caller's ``HTTPClient``, under a ``RequestPolicy``, logged by step and
/// display URL (never a query, a body or a header value).
package struct FlowTransport: Sendable {
    package let http: any HTTPClient
    package let logger: Logger
    /// `http`, when it takes the URL already parsed (asked once, not per request).
    private let parsedURLClient: (any ParsedURLHTTPClient)?

    package init(http: any HTTPClient, logger: Logger) {
        self.http = http
        self.logger = logger
        self.parsedURLClient = http as? any ParsedURLHTTPClient
    }

    /// How a deadline stops an operation that waits on this transport alone:
    /// through its transfers when it stops them itself, else by cancelling a
    /// task run for the operation.
    package var deadlineStop: DeadlineStop {
        parsedURLClient?.stopsAtDeadlineScope == true ? .stoppingItsTransfers : .cancellingItsTask
    }

    /// Sends a token-endpoint style request and reads the whole answer under
    /// `policy` (by default: no redirects, 1 MiB, 30 s).
    /// A cancelled task ends with ``AuthKitError/Code/cancelled``, as every AuthKit call does.
    nonisolated(nonsending) package func send(
        _ request: OutgoingRequest, step: FlowStep, policy: RequestPolicy = .tokenEndpoint
    ) async throws
        -> IncomingResponse
    {
        do {
            // `open` and `collect` wait on nothing but the transport's transfer.
            return try await withDeadline(policy.deadline, display: request.displayURL, stoppedBy: deadlineStop) {
                let opened = try await open(request, step: step, policy: policy, collecting: true)
                return IncomingResponse(
                    status: opened.status, headers: opened.headers,
                    body: try await opened.collect(), secrets: request.secrets)
            }
        } catch is CancellationError {
            throw AuthKitError.cancelled
        }
    }

    /// Sends `request` and returns once the head of the final response arrives.
    ///
    /// With a policy that follows redirects, `authorize` adds the credential
    /// to each hop on the original request's origin, and only there: a hop to
    /// another origin goes without it (and without `Authorization`, `Cookie`
    /// or `Proxy-Authorization` headers the caller set), as does every hop
    /// after one that left it (the other host chose where it comes back to:
    /// a 307 there sent the user's credential, method and body to a path of
    /// its choosing), and a hop from https to http, or to a URL carrying a
    /// user name or password (libcurl sent them as Basic credentials), is
    /// refused. A 303 turns a request other than HEAD into a GET without
    /// body, a 301 or 302 a POST (RFC 9110 §15.4.2–4), and a 301 or 302 to
    /// another method is not followed (``replaysAnUnsafeMethod(_:status:)``);
    /// 307 and 308 keep method and body.
    ///
    /// `collecting`: the caller reads each body whole (``OpenedResponse/collect()``),
    /// which the transport may then hold instead of streaming
    /// (``ParsedURLHTTPClient/send(_:url:body:collectingAtMost:)``). A body
    /// the caller would stream is collected too when the policy's cap is
    /// within what the transport holds before streaming anyway
    /// (``ParsedURLHTTPClient/collectsBodiesUpTo``): the head then comes with
    /// the whole body, which is at most the cap plus one byte (refused by
    /// ``OpenedResponse/bounded(until:allowed:)`` as it is read).
    nonisolated(nonsending) package func open(
        _ request: OutgoingRequest, step: FlowStep, policy: RequestPolicy,
        authorize: (@Sendable (OutgoingRequest) async throws -> OutgoingRequest)? = nil, collecting: Bool = false
    ) async throws -> OpenedResponse {
        let origin = request.target.origin
        let collecting = collecting || policy.maximumBodySize <= (parsedURLClient?.collectsBodiesUpTo ?? 0)
        var current = request
        var hops = 0
        var leftTheOrigin = false
        // What every hop carried: the request's own, and what `authorize`
        // added (an API request's access token), for the refusal below.
        var secrets = request.secrets
        while true {
            let credentialed = authorize == nil || (!leftTheOrigin && current.target.origin == origin)
            // The request before `authorize`, set aside while what it made
            // goes in its place: the redirect below is worked out from it.
            // Without `authorize`, the request itself goes (a copy of it made
            // for every hop was a dozen reference counts raised and dropped
            // per token call).
            var unauthorized: OutgoingRequest?
            if credentialed {
                guard current.target.allowsCredentials else {
                    throw AuthKitError.insecureTransport(url: current.displayURL)
                }
                if let authorize {
                    var made = try await authorize(current)
                    made.addUserAgent()
                    secrets += made.secrets
                    swap(&current, &made)
                    unauthorized = consume made
                }
            }
            // On the request itself, for the hops after a redirect too.
            if unauthorized == nil { current.addUserAgent() }
            // -v said nothing of a hop that went without the credential, so
            // an API's 401 after it read as the credential's refusal.
            let uncredentialed =
                authorize == nil || credentialed
                ? ""
                : leftTheOrigin && current.target.origin == origin
                    ? " (without the credential: the way back to \(origin) went through another origin)"
                    : " (without the credential, which goes only to \(origin))"
            logger.debug("\(step.rawValue): \(current.head.method.rawValue) \(current.displayURL)\(uncredentialed)")
            let (head, body) = try await Self.speakingOf(current.displayURL) {
                if let parsedURLClient, collecting {
                    try await parsedURLClient.send(
                        current.head, url: current.url, body: current.body, collectingAtMost: policy.maximumBodySize)
                } else if let parsedURLClient {
                    try await parsedURLClient.send(current.head, url: current.url, body: current.body)
                } else {
                    try await http.send(current.head, body: current.body)
                }
            }
            let carriedProof = current.head.headerFields.contains(DPoPProof.headerName)
            if let unauthorized = consume unauthorized { current = unauthorized }
            let status = head.status.code
            logger.debug("\(step.rawValue): HTTP \(status)")
            // A transport reads past interim answers (100, 103); one that
            // hands back a 1xx took a 101 as final (RFC 9110 §15.2.2: it
            // answers only a request that asked to upgrade, as none here does).
            guard status >= 200 else {
                body.cancel()
                throw AuthKitError.network(
                    url: current.displayURL,
                    reason: .init(
                        .malformedAnswer,
                        status == 101
                            ? Self.switchedProtocol
                            : "the server answered \(status), an interim status, as its final answer"))
            }
            guard (300...399).contains(status), status != 304 else {
                return OpenedResponse(
                    status: status, headers: head.headerFields, url: current.url,
                    body: body, maximumBodySize: policy.maximumBodySize, display: current.displayURL,
                    deadlineStop: deadlineStop, redirectsFollowed: hops, credentialed: credentialed)
            }
            if policy.redirects == .deliver {
                return OpenedResponse(
                    status: status, headers: head.headerFields, url: current.url,
                    body: body, maximumBodySize: policy.maximumBodySize, display: current.displayURL,
                    deadlineStop: deadlineStop, credentialed: credentialed)
            }
            body.cancel()
            // RFC 9449 §9: a resource server may hand the next nonce out with
            // any answer, a redirect's too; the next hop's proof carries it.
            if carriedProof {
                DPoPNonces.shared.remember(head.headerFields, for: current.target.origin, from: .resource)
            }
            // One Location (RFC 9110 §10.2.2): two were joined with ", " and
            // followed as the path "/a,%20http://…".
            let locations = head.headerFields[values: .location]
            // A host that is no host name or address literal (`http:\\host`
            // leaves none; an escape or a non-ASCII byte, percent-encoded)
            // was handed to the transport, and its refusal reported as a
            // network error ("the request has no absolute URL").
            let location =
                (locations.count == 1 ? URL(string: locations[0], relativeTo: current.url)?.absoluteURL : nil)
                .flatMap { Self.hasUsableHost($0) ? $0 : nil }
            guard case .follow(let maximum) = policy.redirects, hops < maximum, let target = location,
                ["http", "https"].contains(target.scheme?.lowercased() ?? ""),
                !(current.url.scheme?.lowercased() == "https" && target.scheme?.lowercased() == "http"),
                !Self.namesUserInfo(locations[0]),
                !Self.replaysAnUnsafeMethod(current.head.method, status: status)
            else {
                // Which rule stopped it, beside the target: a loop followed
                // ten times was reported as if never followed.
                var shown = location?.origin ?? "(no usable Location)"
                if case .follow(let maximum) = policy.redirects, let target = location {
                    let scheme = target.scheme?.lowercased() ?? ""
                    if !["http", "https"].contains(scheme) {
                        shown += " (not an http or https URL)"
                    } else if current.url.scheme?.lowercased() == "https", scheme == "http" {
                        shown += " (from https to plain http)"
                    } else if Self.namesUserInfo(locations[0]) {
                        shown += " (a URL carrying a user name or password, RFC 9110 §4.2.4)"
                    } else if Self.replaysAnUnsafeMethod(current.head.method, status: status) {
                        shown +=
                            " (a \(status) answering \(current.head.method.rawValue): followed, it would repeat the \(current.head.method.rawValue) on a URL the server picked, and a GET in its place would do nothing)"
                    } else if hops >= maximum {
                        shown += " (after \(hops) redirects followed, the limit)"
                    }
                }
                // The target is the server's: a secret it was sent can be a
                // host name, which the origin wrote in lower case (so the
                // secrets are looked for in any case there).
                shown = SecretMask(secrets.map { $0.lowercased() }).apply(shown)
                throw SecretMask(secrets).apply(
                    AuthKitError.redirectNotFollowed(step: step, status: status, location: shown))
            }
            if target.origin != origin { leftTheOrigin = true }
            current = Self.redirected(current, to: target, status: status, sameOrigin: !leftTheOrigin)
            hops += 1
        }
    }

    /// Runs `body`, a transport's work for a request shown as `display`: a
    /// network error the transport names by the URL it was given names the
    /// request by `display` instead. The transport's URL is the rendered one,
    /// and a descriptor may put a token in an endpoint's path (Qiita revokes
    /// at `/access_tokens/{access_token}`): "The request to …/access_tokens/
    /// <token> failed" reached the terminal when the network was down.
    nonisolated(nonsending) static func speakingOf<Result>(
        _ display: String, _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        do {
            return try await body()
        } catch let error as AuthKitError {
            guard case .network(_, let reason) = error.reason else { throw error }
            throw AuthKitError.network(url: display, reason: reason)
        }
    }

    /// Whether a `Location`'s own authority carries a user name or password
    /// (a relative one takes the request's, which the caller chose).
    static func namesUserInfo(_ location: String) -> Bool {
        guard let url = URL(string: location), url.host != nil else { return false }
        return url.user != nil || url.password != nil
    }

    /// A 301 or 302 to a method other than GET, HEAD and POST (RFC 9110
    /// §15.4.2–3): followed as it was sent, a `DELETE /items/5` answered
    /// `302 /items` deleted `/items` (the "double DELETE" of frameworks that
    /// redirect with a 302); followed as a GET, it did nothing and answered
    /// 200. Neither is followed.
    static func replaysAnUnsafeMethod(_ method: HTTPRequest.Method, status: Int) -> Bool {
        [301, 302].contains(status) && ![.get, .head, .post].contains(method)
    }

    /// A host name of letters, digits, `-`, `.` and `_`, or a bracketed IPv6 literal.
    static func hasUsableHost(_ url: URL) -> Bool {
        guard var host = url.host(percentEncoded: true), !host.isEmpty else { return false }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.contains(":") { // an IPv6 literal (Foundation gives it without its brackets)
            return host.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }
        }
        return host.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-._".unicodeScalars.contains($0)
        }
    }

    /// Why a `101 Switching Protocols` is refused, whichever transport saw it.
    package static let switchedProtocol =
        "the server switched protocols (101) though none was asked for; what follows is not an HTTP answer"

    private static func redirected(_ request: OutgoingRequest, to target: URL, status: Int, sameOrigin: Bool)
        -> OutgoingRequest
    {
        var next = request
        next.retarget(target)
        if (status == 303 && ![.get, .head].contains(request.head.method))
            || ([301, 302].contains(status) && request.head.method == .post)
        {
            next.head.method = .get
            next.body = nil
            next.head.headerFields[.contentType] = nil
            next.head.headerFields[.contentLength] = nil
        }
        if !sameOrigin {
            for name in [HTTPField.Name.authorization, .cookie, .proxyAuthorization] {
                next.head.headerFields[name] = nil
            }
        }
        return next
    }
}

/// A response whose head has arrived; its body is read under the policy's cap.
package struct OpenedResponse: Sendable {
    package var status: Int
    package var headers: HTTPFields
    /// The URL that answered (after any redirects followed).
    package var url: URL
    package var body: HTTPResponseBody
    package var maximumBodySize: Int
    package var display: String
    /// How a deadline stops a wait for the next chunk: through the body's
    /// own `cancel()` when the transport ends a pending read at once on it
    /// (its ``FlowTransport/deadlineStop``), else by cancelling a task.
    package var deadlineStop: DeadlineStop = .cancellingItsTask
    /// Redirects followed before this answer: a request answered after one
    /// has already been carried out by an earlier hop (a POST answered 303),
    /// and is not sent again from the start.
    package var redirectsFollowed = 0
    /// Whether the hop that answered carried the credential: a 401 from one
    /// that did not (another origin, or the origin again after one) is not
    /// about it, and refreshing for it would spend a rotating refresh token
    /// on a server's say-so.
    package var credentialed = true

    /// Passes each chunk to `consume` as it arrives, and stops the transfer with
    /// ``AuthKitError/Code/responseTooLarge`` once more than the cap has arrived.
    nonisolated(nonsending) package func forEachChunk(_ consume: (Data) throws -> Void) async throws {
        var total = 0
        var chunks = body.makeAsyncIterator()
        while let chunk = try await FlowTransport.speakingOf(display, { try await chunks.nextChunk() }) {
            total += chunk.count
            guard total <= maximumBodySize else {
                body.cancel()
                throw AuthKitError.responseTooLarge(url: display, limit: maximumBodySize)
            }
            try consume(chunk)
        }
    }

    /// The body for a caller to stream: the cap still counted as chunks
    /// arrive, and each chunk awaited only until `deadline`. It pulls from the
    /// transport as the caller reads, so backpressure is kept.
    /// `allowed` is the whole request's time, which a timeout names.
    package func bounded(until deadline: ContinuousClock.Instant, allowed: Duration) -> HTTPResponseBody {
        // Already all there (the default transport hands a short answer over
        // whole): nothing is awaited, so there is no deadline to watch.
        if let complete = body.complete, complete.count <= maximumBodySize { return body }
        let relay = Relay(body.makeAsyncIterator())
        let body = self.body
        let limit = maximumBodySize
        let display = self.display
        let stop = deadlineStop
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                body.cancel()
                throw timedOut(display, within: allowed)
            }
            let chunk: Data?
            do {
                chunk = try await withDeadline(remaining, allowed: allowed, display: display, stoppedBy: stop) {
                    // In the stopping mode only (a task of its own sees no scope).
                    DeadlineScope.current?.onExpiry { body.cancel() }
                    return try await FlowTransport.speakingOf(display) { try await relay.next() }
                }
            } catch {
                body.cancel()
                throw error
            }
            guard let chunk else { return nil }
            relay.total += chunk.count
            guard relay.total <= limit else {
                body.cancel()
                throw AuthKitError.responseTooLarge(url: display, limit: limit)
            }
            return chunk
        })
        return HTTPResponseBody(stream, onCancel: { body.cancel() })
    }

    /// The transport's iterator, advanced by one reader at a time.
    private final class Relay: @unchecked Sendable {
        private var iterator: HTTPResponseBody.AsyncIterator
        var total = 0
        init(_ iterator: HTTPResponseBody.AsyncIterator) { self.iterator = iterator }
        func next() async throws -> Data? { try await iterator.next() }
    }

    /// The whole body, refused past the cap.
    nonisolated(nonsending) package func collect() async throws -> Data {
        // A body that comes in one chunk (a token answer, nearly always) is
        // that chunk, not a copy of it.
        var data: Data?
        try await forEachChunk { chunk in
            if data == nil { data = chunk } else { data!.append(chunk) }
        }
        return data ?? Data()
    }
}
