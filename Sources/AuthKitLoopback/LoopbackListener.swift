import AuthKit
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
#elseif canImport(Darwin)
    import Darwin
#endif

/// One attempt's HTTP listener on the loopback interface: bound for the
/// attempt, closed after it (RFC 8252 §8.3: "open the network port only when starting
/// the authorization request, and close it once the response is returned").
///
/// It has its own one-thread event loop group, so closing it closes every
/// connection still open (a preconnect, a slow favicon request) as well.
final class LoopbackListener: @unchecked Sendable {
    private let redirect: LoopbackRedirect
    let providerName: String
    /// The session's check, given the redirect as text exactly as it arrived.
    private let validate: @Sendable (String) throws -> Void
    private let onIgnored: @Sendable (Error) -> Void
    let connectionTimeout: TimeAmount
    let maxRequestBytes: Int

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let answerPromise: EventLoopPromise<URL>
    private let lock = ThreadLock()
    /// The listening sockets: one, or two for `localhost` (127.0.0.1 and ::1, one port).
    private var serverChannels: [Channel] = []
    /// `http://127.0.0.1:PORT` (the requested host as written, the bound port),
    /// prefixed to request targets; never taken from the request's `Host` header.
    private var origin: String?
    private var answered = false
    /// Accepted connections still open, so closing can wait for browsers to hang up.
    private var connections: [ObjectIdentifier: Channel] = [:]
    /// The open connections, oldest first (``maxConnections``).
    private var arrivals: [ObjectIdentifier] = []
    /// `close` waiting for the last connection to go (resumed once, by
    /// whichever comes first: the last hang-up, the grace period, cancellation).
    private var hangUpWaiters: [CheckedContinuation<Void, Never>] = []

    init(
        redirect: LoopbackRedirect, providerName: String, validate: @escaping @Sendable (String) throws -> Void,
        connectionTimeout: TimeAmount, maxRequestBytes: Int, onIgnored: @escaping @Sendable (Error) -> Void
    ) {
        self.redirect = redirect
        self.providerName = providerName
        self.validate = validate
        self.onIgnored = onIgnored
        self.connectionTimeout = connectionTimeout
        self.maxRequestBytes = maxRequestBytes
        self.answerPromise = group.next().makePromise(of: URL.self)
    }

    /// Binds and returns the final redirect URI (the requested one with the bound port).
    ///
    /// `SO_REUSEADDR` and `SO_REUSEPORT` are explicitly off (RFC 8252 §8.3
    /// forbids sharing the port; SwiftNIO's `ServerBootstrap` does not set them
    /// either, this only makes the choice visible): with either on, another
    /// local program could bind the same port and receive the code.
    func start() async throws -> URL {
        // A deep accept queue: with a shallow one (16), a burst of stray or
        // hostile local connections fills it, the kernel drops further
        // handshakes' final ACK, and the browser's redirect waits for a SYN-ACK
        // retransmission — seconds (ListenerAbuseTests).
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 0)
            .serverChannelOption(Self.reusePort, value: 0)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(RequestSizeLimiter(maxBytes: maxRequestBytes))
                    try pipeline.addHandler(HTTPResponseEncoder())
                    // The decoder's own limits (80 KiB a field and in all by
                    // default) no lower than the size limiter's: a larger
                    // maxRequestBytes was refused there first, with a 400
                    // and no word to the caller.
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderFieldSize = max(limits.maxHeaderFieldSize, maxRequestBytes)
                    limits.maxHeaderListSize = max(limits.maxHeaderListSize, maxRequestBytes)
                    try pipeline.addHandler(
                        ByteToMessageHandler(
                            HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits))
                    )
                    try pipeline.addHandler(LoopbackRequestHandler(listener: self))
                }
            }
        let channels: [Channel]
        do {
            channels = try await bindAll(bootstrap)
        } catch {
            answerPromise.fail(CancellationError()) // never awaited; NIO reports an unfulfilled promise
            try? await group.shutdownGracefully()
            throw error
        }
        let port = channels[0].localAddress?.port ?? redirect.bindPort
        let final = redirect.final(boundPort: port)
        var components = URLComponents(url: final, resolvingAgainstBaseURL: false)
        components?.percentEncodedPath = ""
        components?.percentEncodedQuery = nil
        components?.fragment = nil
        lock.withLock {
            serverChannels = channels
            origin = components?.string
        }
        return final
    }

    /// Binds every address of the redirect on one port. When the second
    /// address's port is taken (another program on [::1]), a flexible port is
    /// tried again elsewhere and a fixed one fails as `portInUse` naming that
    /// address. A machine without IPv6 has no ::1 anyone could bind, so there
    /// the IPv4 socket alone is enough.
    ///
    /// The hosts are address literals, bound as such: `bind(host:port:)` would
    /// resolve them with `getaddrinfo`, which loads the system's name-service
    /// modules (and waits for any library another thread is loading, such as
    /// libcurl for the token request).
    private func bindAll(_ bootstrap: ServerBootstrap) async throws -> [Channel] {
        let hosts = redirect.bindHosts
        var lastError: Error = AuthKitError.loopback(
            .bindFailed(
                host: hosts[0], port: redirect.bindPort, reason: "no address to bind"))
        for _ in 0..<(redirect.bindPort == 0 ? 5 : 1) {
            let first: Channel
            do {
                first = try await bootstrap.bind(to: SocketAddress(ipAddress: hosts[0], port: redirect.bindPort)).get()
            } catch {
                throw Self.bindError(error, host: hosts[0], port: redirect.bindPort)
            }
            let port = first.localAddress?.port ?? redirect.bindPort
            var channels = [first]
            do {
                for host in hosts.dropFirst() {
                    do {
                        channels.append(try await bootstrap.bind(to: SocketAddress(ipAddress: host, port: port)).get())
                    } catch let error as IOError where [EAFNOSUPPORT, EADDRNOTAVAIL].contains(error.errnoCode) {
                        continue // no IPv6 loopback on this machine
                    } catch {
                        throw Self.bindError(error, host: host, port: port)
                    }
                }
                return channels
            } catch {
                for channel in channels { try? await channel.close() }
                lastError = error
            }
        }
        throw lastError
    }

    /// The bound port.
    var port: Int? { lock.withLock { serverChannels.first?.localAddress?.port } }

    /// The addresses listened on, for tests (`127.0.0.1`, `::1`).
    var boundAddresses: [String] { lock.withLock { serverChannels.compactMap { $0.localAddress?.ipAddress } } }

    /// The listening socket's `SO_REUSEADDR` and `SO_REUSEPORT` values, for the test that both are off.
    func reuseOptions() async throws -> (address: Int32, port: Int32) {
        guard let channel = lock.withLock({ serverChannels.first }) else { return (-1, -1) }
        let address = try await channel.getOption(ChannelOptions.socketOption(.so_reuseaddr)).get()
        let port = try await channel.getOption(Self.reusePort).get()
        return (Int32(address), Int32(port))
    }

    /// Waits for the genuine redirect.
    /// - Throws: ``AuthKit/AuthKitError/Code/redirectTimedOut``; ``AuthKit/AuthKitError/Code/cancelled``
    ///   when the task is cancelled.
    func answer(timeout: Duration) async throws -> URL {
        let promise = answerPromise
        let deadline = promise.futureResult.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            promise.fail(AuthKitError.loopback(.timedOut(after: timeout)))
        }
        defer { deadline.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(CancellationError())
            }
        } catch is CancellationError {
            throw AuthKitError.cancelled
        }
    }

    /// Closes the listening socket at once, then every open connection: after
    /// the browsers hang up (they were sent `Connection: close`), or after
    /// `grace`. Closing a connection first would leave its port in TIME_WAIT,
    /// which without SO_REUSEADDR blocks the next bind of a fixed port.
    func close(grace: Duration = .seconds(1)) async {
        answerPromise.fail(CancellationError()) // no-op when answered
        for channel in lock.withLock({ serverChannels }) { try? await channel.close() }
        await waitForHangUps(within: grace)
        for channel in lock.withLock({ Array(connections.values) }) { Self.reset(channel) }
        try? await group.shutdownGracefully()
    }

    /// Closes a connection the browser did not close (it stayed silent past
    /// the deadline, or past the grace at the end) with a reset (SO_LINGER
    /// with a zero timeout): an ordinary close from this side would leave
    /// the port in TIME_WAIT for a minute, and without SO_REUSEADDR the
    /// next sign-in on a fixed port could not bind it.
    static func reset(_ channel: Channel) {
        guard let socket = channel as? SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Connections held open at once. Each idle one waits out
    /// ``connectionTimeout``; without a bound, a local program holding a
    /// thousand of them ran the process out of file descriptors, and the
    /// browser's redirect waited out accept's back-off. Past it, the oldest
    /// is closed (reset): the browser's sends its request the moment it connects.
    /// A quarter of the usual 1,024 descriptors; far above what a browser
    /// opens (a handful) or ListenerAbuseTests holds (116).
    static let maxConnections = 256

    func track(_ channel: Channel) {
        let evicted = lock.withLock { () -> Channel? in
            let id = ObjectIdentifier(channel)
            connections[id] = channel
            arrivals.append(id)
            guard connections.count > Self.maxConnections else { return nil }
            while !arrivals.isEmpty {
                if let oldest = connections[arrivals.removeFirst()] { return oldest }
            }
            return nil
        }
        // Reset, not closed: see ``reset(_:)``.
        evicted.map(Self.reset)
    }

    func untrack(_ channel: Channel) {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            connections[ObjectIdentifier(channel)] = nil
            arrivals.removeAll { $0 == ObjectIdentifier(channel) }
            return connections.isEmpty ? takeHangUpWaiters() : []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when no connection is open, or after `grace`, or when the
    /// task is cancelled: no polling, so the answer is exchanged the moment
    /// the browser has hung up.
    private func waitForHangUps(within grace: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let idle = lock.withLock { () -> Bool in
                    if connections.isEmpty || Task.isCancelled { return true }
                    hangUpWaiters.append(waiter)
                    return false
                }
                if idle { return waiter.resume() }
                group.next().scheduleTask(in: TimeAmount(grace)) { self.resumeHangUpWaiters() }
            }
        } onCancel: {
            resumeHangUpWaiters()
        }
    }

    private func resumeHangUpWaiters() {
        for waiter in lock.withLock({ takeHangUpWaiters() }) { waiter.resume() }
    }

    /// Called with `lock` held.
    private func takeHangUpWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { hangUpWaiters = [] }
        return hangUpWaiters
    }

    // MARK: - Used by LoopbackRequestHandler, on the event loop

    /// The redirect a request target (`/callback?code=…`) stands for on this
    /// listener, as text: the target exactly as the browser sent it, so the
    /// redirect parser sees (and refuses) what arrived, not what a `URL` would
    /// make of it.
    func redirect(forTarget target: String) -> String? {
        guard target.hasPrefix("/"), let origin = lock.withLock({ origin }) else { return nil }
        return origin + target
    }

    /// Tells the caller of a request refused before it could be checked.
    func ignored(_ error: Error) { onIgnored(error) }

    /// Runs the session's check; returns the reason to ignore the request, or nil for the genuine answer.
    func check(_ redirect: String) -> Error? {
        do {
            try validate(redirect)
            return nil
        } catch {
            // Another path with a character no URL holds (a port scanner,
            // `/favicon.ico?a|b`): a stray, not a refused answer, whatever
            // the parser found first.
            if case .redirect(.malformed)? = error.authKitReason, !isAtRedirectPath(redirect) {
                let stray = AuthKitError.redirect(.unexpectedTarget(expected: expectedPath, received: "another path"))
                onIgnored(stray)
                return stray
            }
            onIgnored(error)
            return error
        }
    }

    /// Whether `redirect` (the request as it arrived, with this listener's
    /// origin) names the redirect URI's path.
    private func isAtRedirectPath(_ redirect: String) -> Bool {
        guard let origin = lock.withLock({ origin }) else { return false }
        let target = redirect.dropFirst(origin.count)
        let path = target.prefix { $0 != "?" && $0 != "#" }
        return path == expectedPath
    }

    /// The redirect URI's path as written (percent-encoded, a trailing `/`
    /// kept), as the redirect parser compares it: `URL.path` decodes it and
    /// drops a trailing slash, and a malformed answer at `/callback/` was
    /// then taken for a stray at another path (a 404, and the sign-in
    /// waited out its timeout instead of saying why it was refused).
    private var expectedPath: String {
        let path = URLComponents(url: redirect.requested, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    /// True for the first genuine answer only: later ones (a reload) get the page but do not answer again.
    func claimAnswer() -> Bool {
        lock.withLock {
            defer { answered = true }
            return !answered
        }
    }

    func deliver(_ url: URL) {
        answerPromise.succeed(url)
    }

    // MARK: - Errors

    private static var reusePort: ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: SO_REUSEPORT))
    }

    private static func bindError(_ error: Error, host: String, port: Int) -> Error {
        let display = host.contains(":") ? "[\(host)]" : host
        if let error = error as? IOError {
            if error.errnoCode == EADDRINUSE { return AuthKitError.loopback(.portInUse(host: display, port: port)) }
            return AuthKitError.loopback(
                .bindFailed(
                    host: display, port: port, reason: String(cString: strerror(error.errnoCode))))
        }
        return AuthKitError.loopback(.bindFailed(host: display, port: port, reason: "\(error)"))
    }
}
