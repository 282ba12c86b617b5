import NIOCore

/// Caps the bytes one connection may send: the listener serves one GET per
/// connection, so this caps the request head. It sits before the HTTP decoder
/// and, once the cap is passed, drops further bytes and reports
/// ``RequestSizeLimiter/TooLarge`` down the pipeline, where
/// ``LoopbackRequestHandler`` answers 431 and closes.
final class RequestSizeLimiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// What the caller is told (``LoopbackEvent/rejectedAnswer(reason:)``):
    /// a provider's genuine redirect refused so left the sign-in waiting out
    /// its timeout with no word of why.
    struct TooLarge: Error, CustomStringConvertible {
        let limit: Int
        var description: String {
            "a request of over \(limit / 1024) KiB was refused (431). If it was the provider's redirect, the browser sent too many cookies for this host (every port of 127.0.0.1 or localhost shares them): clear that site's cookies in the browser and sign in again."
        }
    }

    private let maxBytes: Int
    private var received = 0
    private var exceeded = false

    init(maxBytes: Int) { self.maxBytes = maxBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !exceeded else { return }
        received += unwrapInboundIn(data).readableBytes
        guard received <= maxBytes else {
            exceeded = true
            context.fireErrorCaught(TooLarge(limit: maxBytes))
            return
        }
        context.fireChannelRead(data)
    }
}
