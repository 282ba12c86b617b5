import AuthKit
import Dispatch
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// HTTP/1.1 on a loopback address, one request per connection, handing each
/// complete request to `respond`.
///
/// Bounded like the listener it stands in for:
/// - a request body over ``maxBodyBytes`` gets 413 as soon as that is known
///   (from `Content-Length`, or once that many bytes have come); at most
///   as much again is read and dropped before the connection closes, so a
///   client still sending can read the answer;
/// - a connection that has not sent its whole request within
///   ``requestTimeout`` is closed, so idle or dripping clients cannot hold
///   descriptors open for ever;
/// - at most ``maxConnections`` connections are open at once: past it, the
///   oldest that has not sent its whole request yet is closed (else the new
///   one), so idle clients cannot use up the process's descriptors and
///   starve one that would send a request;
/// - an HTTP/1.1 request without `Host`, or any with two, gets 400 (RFC 9112 §3.2);
/// - at most ``maxPendingSignatureChecks`` requests wait for a signature
///   check at once (each holds its body, up to ``maxBodyBytes``); one more
///   is answered 503, and one whose client has gone by the time its turn
///   comes is dropped unchecked;
/// - the server binds only 127.0.0.1 (a sandbox that accepted tokens from the
///   network would be a credential sink for anyone on it).
///
/// A request refused here, before `respond` sees it (a 413, or NIO's 400 for
/// one that is not HTTP: a header section over NIO's 80 KiB, bad framing),
/// is handed to `refused`, so the operator's log shows it as it shows every
/// answered request.
final class SandboxHTTPServer: @unchecked Sendable {
    static let maxBodyBytes = 1 << 20
    /// The most requests whose DPoP proof or client assertion waits for
    /// jwt-kit at once. The checks run one at a time (``SignatureCheckExecutor``),
    /// each in well under a millisecond; a queue without bound let 1,000
    /// posts of 1 MB with `DPoP: x` hold 900 MB and keep valid proofs
    /// waiting for minutes. Past it, 503 with `Retry-After` (RFC 9110 §15.6.4).
    /// 64: a client's burst of DPoP requests (a task group) is served, at
    /// most 64 MiB held.
    static let maxPendingSignatureChecks = 64
    /// The most connections open at once. A client on this machine opens a
    /// few; 250 idle ones left none of the 256 descriptors `ulimit -n 256`
    /// allows for the request that mattered; 128 leaves a burst of
    /// concurrent requests room under that limit.
    static let maxConnections = 128
    /// The longest request path taken (the query is bounded by the head's
    /// size); longer ones get 414.
    static let maxPathBytes = 8 << 10
    /// Ample for a client on the same machine: a whole request takes
    /// milliseconds over loopback.
    static let standardRequestTimeout = Duration.seconds(10)

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = ThreadLock()
    private var stopped = false
    /// Requests queued for or in their signature check; guarded by `lock`.
    private var pendingChecks = 0
    /// The open connections, by channel: the order they came in, and
    /// whether their request is still to come in whole. Guarded by `lock`.
    private var connections: [ObjectIdentifier: (order: Int, channel: Channel, waiting: Bool)] = [:]
    private var connectionsAccepted = 0
    let respond: @Sendable (SandboxRequest) async -> SandboxResponse
    /// The answer given at once, on the event loop, or `nil` for a request
    /// `respond` must answer (one with a signature to check).
    let respondNow: @Sendable (SandboxRequest) -> SandboxResponse?
    /// Told of each request answered here rather than by `respond`: its
    /// line (method and path, never the query; `nil` when it could not be
    /// read), the status sent and why.
    let refused: @Sendable (_ line: String?, _ status: Int, _ reason: String) -> Void
    let requestTimeout: Duration
    /// How long a refresh (`grant_type=refresh_token`) waits before it is
    /// handled (``SandboxOptions/refreshDelay``).
    var refreshDelay: Duration = .zero

    init(
        requestTimeout: Duration = SandboxHTTPServer.standardRequestTimeout,
        refused: @escaping @Sendable (_ line: String?, _ status: Int, _ reason: String) -> Void = { _, _, _ in },
        respond: @escaping @Sendable (SandboxRequest) async -> SandboxResponse,
        respondNow: @escaping @Sendable (SandboxRequest) -> SandboxResponse? = { _ in nil }
    ) {
        self.requestTimeout = requestTimeout
        self.refused = refused
        self.respond = respond
        self.respondNow = respondNow
    }

    /// Binds 127.0.0.1:`port` (0: a free port) and returns the port bound.
    /// - Throws: ``AuthKit/AuthKitError/Code/portInUse`` (or ``AuthKit/AuthKitError/Code/cannotListen``) naming the port and the system's reason.
    func start(port: Int) async throws -> Int {
        // SwiftNIO traps on a port that does not fit 16 bits.
        guard (0...65535).contains(port) else {
            throw AuthKitError.sandbox(.cannotListen(port: port, reason: "not a TCP port (0–65535)"))
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                    channel.pipeline.addHandler(
                        SandboxRequestHandler(server: self, port: channel.localAddress?.port ?? 0))
                }
            }
        let channel: Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
        } catch let error as IOError {
            if error.errnoCode == EADDRINUSE { throw AuthKitError.sandbox(.portInUse(port: port)) }
            throw AuthKitError.sandbox(.cannotListen(port: port, reason: String(cString: strerror(error.errnoCode))))
        } catch {
            throw AuthKitError.sandbox(.cannotListen(port: port, reason: "\(error)"))
        }
        lock.withLock { self.channel = channel }
        return channel.localAddress?.port ?? port
    }

    /// How many connections are open now.
    var openConnections: Int { lock.withLock { connections.count } }

    /// Counts `channel` in; past ``maxConnections``, closes the oldest
    /// connection still waiting for its request (or `channel` itself, when
    /// every other one has a request being answered). The one closed is no
    /// longer counted from then on: its handler is removed later, and a
    /// burst of connections (NIO accepts several per read) all picked the
    /// same one, still counted, so each burst let a few past the cap.
    fileprivate func admit(_ channel: Channel) {
        let victim = lock.withLock { () -> Channel? in
            connectionsAccepted += 1
            connections[ObjectIdentifier(channel)] = (connectionsAccepted, channel, true)
            guard connections.count > Self.maxConnections else { return nil }
            let oldest = connections.values.filter { $0.waiting && $0.channel !== channel }.min { $0.order < $1.order }
            let victim = oldest?.channel ?? channel
            connections[ObjectIdentifier(victim)] = nil
            return victim
        }
        victim?.close(promise: nil)
    }

    /// `channel` has sent its whole request: it is no longer idle.
    fileprivate func requestArrived(on channel: Channel) {
        lock.withLock { connections[ObjectIdentifier(channel)]?.waiting = false }
    }

    fileprivate func forget(_ channel: Channel) {
        lock.withLock { connections[ObjectIdentifier(channel)] = nil }
    }

    /// How many requests wait for (or are in) their signature check now.
    var pendingSignatureChecks: Int { lock.withLock { pendingChecks } }

    /// Takes a place in the signature checks' queue; `false` when it is full.
    fileprivate func reserveSignatureCheck() -> Bool {
        lock.withLock {
            guard pendingChecks < Self.maxPendingSignatureChecks else { return false }
            pendingChecks += 1
            return true
        }
    }

    fileprivate func releaseSignatureCheck() { lock.withLock { pendingChecks -= 1 } }

    /// Closes the listener. Safe to call more than once.
    func stop() async {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? await lock.withLock { channel }?.close()
        try? await group.shutdownGracefully()
    }
}

private final class SandboxRequestHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: SandboxHTTPServer
    private let port: Int
    private var head: HTTPRequestHead?
    private var body = Data()
    /// The response, once it is on its way: the connection serves one request.
    private var answer: EventLoopFuture<Void>?
    /// Body bytes dropped after a 413 (see ``refuseTooLarge(_:context:)``).
    private var drained = 0
    private var deadline: Scheduled<Void>?

    init(server: SandboxHTTPServer, port: Int) {
        self.server = server
        self.port = port
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(server.requestTimeout)) { channel.close(promise: nil) }
        server.admit(channel)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        server.forget(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if let answer {
            // Only a refused body is still coming: drop it, within bounds.
            switch part {
            case .body(let buffer):
                drained += buffer.readableBytes
                if drained > SandboxHTTPServer.maxBodyBytes { close(after: answer, context: context) }
            case .end:
                close(after: answer, context: context)
            case .head:
                break
            }
            return
        }
        switch part {
        case .head(let head):
            // No endpoint's path comes near this; routing a longer one only
            // costs the server's one thread (RFC 9112 §3: 414).
            guard head.uri.prefix(while: { $0 != "?" }).utf8.count <= SandboxHTTPServer.maxPathBytes else {
                return refuse(
                    head, status: 414, reason: "request path over \(SandboxHTTPServer.maxPathBytes) bytes",
                    context: context)
            }
            // RFC 9112 §3.2: a server "MUST respond with a 400" to an
            // HTTP/1.1 request without Host, or to any with more than one.
            let hosts = head.headers["Host"].count
            guard hosts == 1 || (hosts == 0 && (head.version.major, head.version.minor) < (1, 1)) else {
                return refuse(
                    head, status: 400,
                    reason: hosts == 0
                        ? "an HTTP/1.1 request without a Host header (RFC 9112 §3.2)"
                        : "\(hosts) Host headers (RFC 9112 §3.2 allows one)", context: context)
            }
            let declared = head.headers.first(name: "Content-Length").flatMap { Int($0) } ?? 0
            guard declared <= SandboxHTTPServer.maxBodyBytes else { return refuseTooLarge(head, context: context) }
            self.head = head
            body = Data()
        case .body(var buffer):
            guard let head else { return }
            // Chunked bodies say nothing in advance; count what arrives.
            guard body.count + buffer.readableBytes <= SandboxHTTPServer.maxBodyBytes else {
                return refuseTooLarge(head, context: context)
            }
            if let bytes = buffer.readBytes(length: buffer.readableBytes) { body.append(contentsOf: bytes) }
        case .end:
            guard let head else { return }
            server.requestArrived(on: context.channel)
            let request = SandboxRequest(
                method: head.method.rawValue, target: head.uri,
                headers: head.headers.map { ($0.name, $0.value) }, body: body,
                origin: "http://127.0.0.1:\(port)")
            if server.refreshDelay > .zero, body.count < 64 * 1024,
                String(decoding: body, as: UTF8.self).contains("grant_type=refresh_token")
            {
                // A refresh held up on the way: it reaches the emulation
                // late, and not at all if its sender is gone by then. The
                // connection's deadline moves past the delay: kept, it
                // closed the connection at 10 s, and any delay above that
                // dropped every refresh.
                let server = self.server
                let channel = context.channel
                deadline?.cancel()
                deadline = context.eventLoop.scheduleTask(
                    in: TimeAmount(server.refreshDelay) + TimeAmount(server.requestTimeout)
                ) { channel.close(promise: nil) }
                // Run on this loop: the handler and its context stay on it.
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: TimeAmount(server.refreshDelay)) {
                    let context = bound.value
                    guard context.channel.isActive else {
                        server.refused(
                            "\(head.method.rawValue) \(head.uri.prefix { $0 != "?" })", 499,
                            "the client went away during --refresh-delay; the refresh was dropped unhandled")
                        return
                    }
                    self.answer(request, to: head, context: context)
                }
                return
            }
            answer(request, to: head, context: context)
        }
    }

    /// Answers 413 before the body has all come, then drops up to another
    /// ``SandboxHTTPServer/maxBodyBytes`` of it before closing, as servers
    /// do ("lingering close"): closing with unread bytes makes the kernel
    /// reset the connection, and a client still sending would never read
    /// the 413. A client that sends more is cut off then, and one that
    /// stops sending is closed at the connection's deadline.
    private func refuseTooLarge(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        refuse(head, status: 413, reason: "request body over \(SandboxHTTPServer.maxBodyBytes) bytes", context: context)
    }

    private func refuse(_ head: HTTPRequestHead, status: Int, reason: String, context: ChannelHandlerContext) {
        body = Data()
        self.head = nil
        // Logged before it is sent, as answered requests are: a client that
        // reads the refusal and goes on finds it in the log.
        server.refused("\(head.method.rawValue) \(head.uri.prefix { $0 != "?" }.prefix(200))", status, reason)
        answer = send(.empty(status: status, step: "unknown", summary: reason), to: head, context: context)
    }

    /// Has the emulation answer `request` (which may check signatures
    /// asynchronously first), then writes the answer on the event loop and
    /// closes: the connection serves one request.
    private func answer(_ request: SandboxRequest, to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let server = self.server
        if let response = server.respondNow(request) {
            let answer = send(response, to: head, context: context)
            close(after: answer, context: context)
            return
        }
        guard server.reserveSignatureCheck() else {
            let reason =
                "\(SandboxHTTPServer.maxPendingSignatureChecks) requests already wait for their signature check"
            server.refused("\(head.method.rawValue) \(head.uri.prefix { $0 != "?" }.prefix(200))", 503, reason)
            var busy = SandboxResponse.empty(status: 503, step: "unknown", summary: reason)
            busy.headers = [("Retry-After", "1")]
            close(after: send(busy, to: head, context: context), context: context)
            return
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound(context, eventLoop: loop)
        let channel = context.channel
        let promise = loop.makePromise(of: SandboxResponse?.self)
        // A client gone by the time the request's turn comes (its deadline
        // passed while it waited, or it hung up) gets no check: nobody
        // would read the answer, and the queue is the valid requests' too.
        let check: @Sendable () async -> SandboxResponse? = {
            defer { server.releaseSignatureCheck() }
            guard channel.isActive else { return nil }
            return await server.respond(request)
        }
        // The signatures are checked on a thread of the sandbox's own, not
        // on Swift's cooperative pool: a test process (or an app) holding the
        // pool's few threads in blocking work kept the check from starting
        // until the request's deadline closed the connection unanswered
        // ("Server returned nothing", seen in a loaded CI run).
        if #available(macOS 15, iOS 18, *) {
            Task(executorPreference: SignatureCheckExecutor.shared) { promise.succeed(await check()) }
        } else {
            promise.completeWithTask { await check() }
        }
        promise.futureResult.whenSuccess { response in
            guard let response else {
                server.refused(
                    "\(head.method.rawValue) \(head.uri.prefix { $0 != "?" }.prefix(200))", 499,
                    "the client went away before its signature check; the request was dropped unhandled")
                return
            }
            let context = bound.value
            let answer = self.send(response, to: head, context: context)
            self.close(after: answer, context: context)
        }
    }

    private func send(_ response: SandboxResponse, to head: HTTPRequestHead, context: ChannelHandlerContext)
        -> EventLoopFuture<Void>
    {
        self.head = nil
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        headers.replaceOrAdd(name: "Connection", value: "close")
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        answer = written
        return written
    }

    private func close(after answer: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let channel = context.channel
        answer.whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // NIO's error handler has answered 400 to a request it could not
        // parse (unless an answer of ours was still being written). Once
        // ours is complete, what follows on the connection is not logged:
        // it is closed after the one request it serves.
        if let error = error as? HTTPParserError, answer == nil {
            let reason =
                error == .headerOverflow
                ? "header section over NIO's 80 KiB" : "not a well-formed HTTP/1.1 request (\(error))"
            server.refused(head.map { "\($0.method.rawValue) \($0.uri.prefix { $0 != "?" })" }, 400, reason)
        }
        context.close(promise: nil)
    }
}

/// One thread (a serial dispatch queue) for the requests whose DPoP proof or
/// client assertion jwt-kit checks asynchronously; see ``SandboxHTTPServer``'s
/// `answer`. Default actors the check uses run here too (SE-0417).
@available(macOS 15, iOS 18, *)
final class SignatureCheckExecutor: TaskExecutor {
    static let shared = SignatureCheckExecutor()
    private let queue = DispatchQueue(label: "authkit.sandbox.signatures")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
