import AuthKit
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Answers one request on one connection, then closes it.
///
/// Every request goes through the session's `validateRedirect` first
/// (RFC 6749 §10.12: `state` before anything else). A request it rejects — a
/// favicon, another path, a missing or forged `state` — gets a 404 or 400 page
/// and the attempt goes on: a stray or hostile request must not end the
/// user's sign-in. The genuine answer gets the "signed in" page (or the
/// provider's error), and is handed to the listener once the page is written.
///
/// Only GET and HEAD are served; a HEAD gets the page's headers but never
/// counts as the answer (a link preview must not consume the redirect). A
/// connection that has not sent a whole request within the listener's
/// connection timeout is closed; the attempt goes on. After the response the
/// browser closes the connection (`Connection: close`), or the same deadline does.
final class LoopbackRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let listener: LoopbackListener
    private var head: HTTPRequestHead?
    private var responded = false
    private var deadline: Scheduled<Void>?

    init(listener: LoopbackListener) { self.listener = listener }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        listener.track(channel)
        deadline = context.eventLoop.scheduleTask(in: listener.connectionTimeout) {
            LoopbackListener.reset(channel)
        }
    }

    /// Untracked here too: a channel whose registration failed is closed
    /// without `channelInactive`, and tracked for ever it held a slot of
    /// the connection cap and made `close()` wait its whole grace.
    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        listener.untrack(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        listener.untrack(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !responded else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            if head.method != .GET && head.method != .HEAD {
                respond(context, .methodNotAllowed(), version: head.version, headOnly: false)
            }
        case .body:
            break // a GET has no body; the size limiter caps it anyway
        case .end:
            guard let head else { return }
            handle(context, head)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !responded else { return }
        let version = head?.version ?? .http1_1
        switch error {
        case let tooLarge as RequestSizeLimiter.TooLarge:
            listener.ignored(tooLarge)
            respond(context, .headTooLarge(), version: version, headOnly: false)
        case is HTTPParserError:
            respond(context, .badRequest(), version: version, headOnly: false)
        default:
            context.close(promise: nil)
        }
    }

    private func handle(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        let headOnly = head.method == .HEAD
        // RFC 9112 §3.2: one Host (an HTTP/1.1 request without one too),
        // or a 400; HTTP/1.0 may leave it out. One that names another host
        // than this machine is a page that reached the listener through a
        // name resolving here (DNS rebinding): answered nothing, not even
        // checked as an answer, and not counted.
        let hosts = head.headers["Host"]
        guard hosts.count == 1 || (hosts.isEmpty && head.version == .http1_0) else {
            respond(context, .badRequest(), version: head.version, headOnly: headOnly)
            return
        }
        if let host = hosts.first, !Self.namesLoopback(host) {
            respond(context, .misdirected(), version: head.version, headOnly: headOnly)
            return
        }
        guard let redirect = listener.redirect(forTarget: head.uri) else {
            respond(context, .badRequest(), version: head.version, headOnly: headOnly)
            return
        }
        if let rejection = listener.check(redirect) {
            let page: LoopbackPage
            if case .redirect(.unexpectedTarget)? = rejection.authKitReason {
                page = .notFound()
            } else {
                page = .rejected(reason: "\(rejection)")
            }
            respond(context, page, version: head.version, headOnly: headOnly)
            return
        }
        // Accepted by the strict parser, so a URL without any re-encoding.
        guard let url = URL(string: redirect) else {
            respond(context, .badRequest(), version: head.version, headOnly: headOnly)
            return
        }
        let page = answerPage(for: url)
        guard !headOnly, listener.claimAnswer() else {
            respond(context, page, version: head.version, headOnly: headOnly)
            return
        }
        let listener = self.listener
        respond(context, page, version: head.version, headOnly: false) {
            listener.deliver(url)
        }
    }

    /// Whether a `Host` field names this machine's loopback: `localhost`,
    /// an address in 127.0.0.0/8, or `[::1]`, with or without a port. A
    /// browser sends the redirect URI's host, which is one of these.
    ///
    /// Read as bytes: SwiftNIO hands over any bytes 0x80–0xFF in a header
    /// as UTF-8, and read as `Character`s, a digit followed by a combining
    /// mark (`1\u{301}`) is one character that sorts among the digits, and
    /// `Int` of it is nil: one such request from any local user crashed the
    /// waiting sign-in's process.
    static func namesLoopback(_ field: String) -> Bool {
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        func isPort(_ text: ArraySlice<UInt8>) -> Bool { !text.isEmpty && text.count <= 5 && text.allSatisfy(isDigit) }
        var host = Array(field.utf8)[...]
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let rest = host[(close + 1)...]
            guard rest.isEmpty || (rest.first == UInt8(ascii: ":") && isPort(rest.dropFirst())) else { return false }
            return host[(host.startIndex + 1)..<close].elementsEqual("::1".utf8)
        }
        if let colon = host.lastIndex(of: UInt8(ascii: ":")) {
            guard isPort(host[(colon + 1)...]) else { return false }
            host = host[..<colon]
        }
        // ASCII letters alone folded: `localhost` in any case, nothing else.
        let folded = host.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 0x20 : $0 }
        if folded.elementsEqual("localhost".utf8) { return true }
        let octets = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0].elementsEqual("127".utf8)
            && octets.allSatisfy { octet in
                !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(isDigit)
                    && octet.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 255
            }
    }

    /// "Signed in", or the provider's refusal: `error` and `error_description`
    /// (RFC 6749 §4.1.2.1), or OAuth 1.0a's `denied` (the user cancelled at
    /// Twitter, whose callback carries the request token there) and
    /// `oauth_problem` (the Problem Reporting extension), which the flow
    /// also ends as a refusal: the page must not say "Signed in" then.
    private func answerPage(for url: URL) -> LoopbackPage {
        Self.answerPage(for: url, provider: listener.providerName)
    }

    static func answerPage(for url: URL, provider providerName: String) -> LoopbackPage {
        let query = url.query(percentEncoded: true) ?? ""
        let parameters = FormURLEncoding.decode(query) ?? []
        func value(_ name: String) -> String? { parameters.first { $0.0 == name }?.1 }
        if let code = value("error") {
            return .providerError(provider: providerName, code: code, description: value("error_description"))
        }
        if value("denied") != nil {
            return .providerError(provider: providerName, code: "access_denied", description: nil)
        }
        if let problem = value("oauth_problem") {
            return .providerError(provider: providerName, code: problem, description: value("oauth_problem_advice"))
        }
        return .signedIn(provider: providerName)
    }

    private func respond(
        _ context: ChannelHandlerContext, _ page: LoopbackPage, version: HTTPVersion, headOnly: Bool,
        then: (@Sendable () -> Void)? = nil
    ) {
        responded = true
        let body = ByteBuffer(string: page.html)
        context.write(wrapOutboundOut(.head(page.head(version: version, bodyLength: body.readableBytes))), promise: nil)
        if !headOnly {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        // The socket is left for the browser to close (`Connection: close`):
        // the side that closes first keeps the port in TIME_WAIT, and without
        // SO_REUSEADDR that would stop the next sign-in on a fixed port from
        // binding for a minute. The connection deadline closes it otherwise.
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            then?()
        }
    }
}
