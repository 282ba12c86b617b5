import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 with an ephemeral port, for tests that
/// must see the exact bytes a client sends (method, path, headers, body).
///
/// Routes are `METHOD /path` → closure; every request is recorded, routed or
/// not; an unrouted request gets a 404 so a test fails loudly rather than hangs.
public final class TestHTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (RecordedRequest) -> StubResponse

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = NSLock()
    private var routes: [String: Handler] = [:]
    private var recorded: [RecordedRequest] = []
    private var accepted = 0
    private var streamed = 0
    private var stopped = false

    /// The loopback address to bind: `127.0.0.1`, or another (`127.0.0.2`) to
    /// play a second host.
    public let host: String

    public init(host: String = "127.0.0.1") { self.host = host }

    /// Binds ``host`` on a free port.
    public func start() async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .childChannelInitializer { [self] channel in
                lock.withLock { accepted += 1 }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(RecordingHandler(server: self))
                }
            }
        channel = try await bootstrap.bind(host: host, port: 0).get()
    }

    public var port: Int { channel?.localAddress?.port ?? 0 }

    /// `http://127.0.0.1:PORT`
    public var baseURL: String { "http://\(host):\(port)" }

    public func route(_ method: String, _ path: String, _ handler: @escaping Handler) {
        lock.withLock { routes["\(method) \(path)"] = handler }
    }

    /// Every request received so far, in order.
    public var requests: [RecordedRequest] { lock.withLock { recorded } }

    public func requests(to path: String) -> [RecordedRequest] { requests.filter { $0.path == path } }

    /// How many connections clients have opened so far.
    public var connections: Int { lock.withLock { accepted } }

    /// How many bytes of streamed bodies (``StubResponse/Stream``) clients
    /// have taken so far: still growing after a client gave up means it is
    /// still reading.
    public var bytesStreamed: Int { lock.withLock { streamed } }

    fileprivate func countStreamed(_ bytes: Int) { lock.withLock { streamed += bytes } }

    /// Closes the listener and its threads. Safe to call more than once: a
    /// second `shutdownGracefully` on the same group would never return.
    public func stop() async {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func respond(to request: RecordedRequest) -> StubResponse {
        let handler: Handler? = lock.withLock {
            recorded.append(request)
            return routes["\(request.method) \(request.path)"]
        }
        return handler?(request)
            ?? .text("no route for \(request.method) \(request.path)", contentType: "text/plain", status: 404)
    }
}

private final class RecordingHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: TestHTTPServer
    private var head: HTTPRequestHead?
    private var body = Data()

    init(server: TestHTTPServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(var buffer):
            if let bytes = buffer.readBytes(length: buffer.readableBytes) { body.append(contentsOf: bytes) }
        case .end:
            guard let head else { return }
            let request = RecordedRequest(
                method: head.method.rawValue, uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let stub = server.respond(to: request)
            if let stream = stub.stream {
                self.head = nil
                Self.send(
                    stream, status: stub.status, headers: stub.headers, version: head.version, context: context,
                    server: server)
                return
            }
            var headers = HTTPHeaders(stub.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(stub.body.count))
            if !stub.keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            let responseHead = HTTPResponseHead(
                version: head.version, status: HTTPResponseStatus(statusCode: stub.status), headers: headers)
            self.head = nil
            let boxed = NIOLoopBound(context, eventLoop: context.eventLoop)
            @Sendable func answer() {
                let context = boxed.value
                context.write(NIOAny(HTTPServerResponsePart.head(responseHead)), promise: nil)
                context.write(
                    NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: stub.body)))), promise: nil)
                if stub.keepAlive {
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                } else {
                    let channel = context.channel
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
                        channel.close(promise: nil)
                    }
                }
            }
            if stub.delay > .zero {
                context.eventLoop.scheduleTask(in: stub.delay) { answer() }
            } else {
                answer()
            }
        }
    }

    /// A chunked body written piece by piece on the event loop until it ends
    /// or the client goes away (a write fails): a drip, or an endless flood.
    private static func send(
        _ stream: StubResponse.Stream, status: Int, headers: [(name: String, value: String)],
        version: HTTPVersion, context: ChannelHandlerContext, server: TestHTTPServer
    ) {
        var fields = HTTPHeaders(headers.map { ($0.name, $0.value) })
        fields.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
        fields.replaceOrAdd(name: "Connection", value: "close")
        context.writeAndFlush(
            NIOAny(
                HTTPServerResponsePart.head(
                    HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status), headers: fields))
            ), promise: nil)
        let loop = context.eventLoop
        let boxed = NIOLoopBound(context, eventLoop: loop)
        @Sendable func write(_ index: Int) {
            let context = boxed.value
            guard index < stream.count, context.channel.isActive else {
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
                    boxed.value.close(promise: nil)
                }
                return
            }
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: stream.chunk)))))
                .whenComplete { result in
                    guard case .success = result else {
                        boxed.value.close(promise: nil)
                        return
                    }
                    server.countStreamed(stream.chunk.count)
                    loop.scheduleTask(in: stream.interval) { write(index + 1) }
                }
        }
        write(0)
    }
}
