import NIOCore

/// Caps the bytes one connection may send: the listener serves one GET per
/// connection, so this caps the request head. It sits before the HTTP decoder
/// and, once the cap is passed, drops further bytes and reports
/// ``RequestSizeLimiter/TooLarge`` down the pipeline, where
/// ``LoopbackRequestHandler`` answers 431 and closes.
final class RequestSizeLimiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct TooLarge: Error {}

    private let maxBytes: Int
    private var received = 0
    private var exceeded = false

    init(maxBytes: Int) { self.maxBytes = maxBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !exceeded else { return }
        received += unwrapInboundIn(data).readableBytes
        guard received <= maxBytes else {
            exceeded = true
            context.fireErrorCaught(TooLarge())
            return
        }
        context.fireChannelRead(data)
    }
}
