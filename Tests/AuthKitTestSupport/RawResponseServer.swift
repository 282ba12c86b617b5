import Foundation
import NIOCore
import NIOPosix

/// A server on 127.0.0.1 that answers every connection with bytes written as
/// they are, once the request starts arriving: for answers ``TestHTTPServer``
/// cannot give because its HTTP encoder keeps them well formed — a head that
/// never ends, a head sent one line at a time, a body shorter than its
/// `Content-Length`, a chunked body cut off before its last chunk.
public final class RawResponseServer: @unchecked Sendable {
    /// What the server writes: `head` at once, then `repeating` again and again
    /// (`interval` apart, until the client goes away), then it closes.
    public struct Script: Sendable {
        public var head: [UInt8]
        public var repeating: [UInt8]?
        public var interval: TimeAmount

        public init(head: String, repeating: String? = nil, interval: TimeAmount = .zero) {
            self.head = Array(head.utf8)
            self.repeating = repeating.map { Array($0.utf8) }
            self.interval = interval
        }
    }

    private let script: Script
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = NSLock()
    private var written = 0

    public init(_ script: Script) { self.script = script }

    public func start() async throws {
        let bootstrap = ServerBootstrap(group: group)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ScriptHandler(server: self)) }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    }

    /// `http://127.0.0.1:PORT`
    public var baseURL: String { "http://127.0.0.1:\(channel?.localAddress?.port ?? 0)" }

    /// How many bytes clients have taken so far: still growing after a client
    /// gave up means it is still reading.
    public var bytesWritten: Int { lock.withLock { written } }

    fileprivate var scriptToPlay: Script { script }
    fileprivate func count(_ bytes: Int) { lock.withLock { written += bytes } }

    public func stop() async {
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }
}

private final class ScriptHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let server: RawResponseServer
    private var started = false

    init(server: RawResponseServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !started else { return }
        started = true
        let script = server.scriptToPlay
        let server = self.server
        let loop = context.eventLoop
        let channel = context.channel
        @Sendable func write(_ bytes: [UInt8], then next: @escaping @Sendable () -> Void) {
            channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { result in
                guard case .success = result else { channel.close(promise: nil); return }
                server.count(bytes.count)
                next()
            }
        }
        @Sendable func repeatForever() {
            guard let piece = script.repeating, channel.isActive else { channel.close(promise: nil); return }
            write(piece) { loop.scheduleTask(in: script.interval) { repeatForever() } }
        }
        write(script.head) { repeatForever() }
    }
}
