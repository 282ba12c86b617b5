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
    private var stopped = false

    public init() {}

    /// Binds 127.0.0.1 on a free port.
    public func start() async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .childChannelInitializer { [self] channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(RecordingHandler(server: self))
                }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    }

    public var port: Int { channel?.localAddress?.port ?? 0 }

    /// `http://127.0.0.1:PORT`
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func route(_ method: String, _ path: String, _ handler: @escaping Handler) {
        lock.withLock { routes["\(method) \(path)"] = handler }
    }

    /// Every request received so far, in order.
    public var requests: [RecordedRequest] { lock.withLock { recorded } }

    public func requests(to path: String) -> [RecordedRequest] { requests.filter { $0.path == path } }

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
        return handler?(request) ?? .text("no route for \(request.method) \(request.path)", contentType: "text/plain", status: 404)
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
            var headers = HTTPHeaders(stub.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(stub.body.count))
            headers.replaceOrAdd(name: "Connection", value: "close")
            let responseHead = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: stub.status), headers: headers)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: stub.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            self.head = nil
        }
    }
}
