import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A server on 127.0.0.1 that answers every connection with bytes written as
/// they are, once the request starts arriving: for answers ``TestHTTPServer``
/// cannot give because its HTTP encoder keeps them well formed — a head that
/// never ends, a head sent one line at a time, a body shorter than its
/// `Content-Length`, a chunked body cut off before its last chunk. With
/// `tls`, it speaks https with that certificate first.
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

    fileprivate let script: Script
    private let tls: NIOSSLContext?
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = NSLock()
    private var written = 0
    private var received = 0
    private var closed = 0

    public init(_ script: Script) {
        self.script = script
        self.tls = nil
    }

    public init(_ script: Script, tls certificate: SelfSignedCertificate) throws {
        self.script = script
        self.tls = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: [.certificate(certificate.certificate)], privateKey: .privateKey(certificate.key)))
    }

    public func start() async throws {
        let bootstrap = ServerBootstrap(group: group)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.addHandler(ScriptHandler(server: self))
                }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    }

    /// `http://127.0.0.1:PORT`, or `https://` with TLS.
    public var port: Int { channel?.localAddress?.port ?? 0 }
    public var baseURL: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(channel?.localAddress?.port ?? 0)" }

    /// How many bytes of requests arrived (over TLS: after decryption, so
    /// none when the client gave up during the handshake).
    public var bytesReceived: Int { lock.withLock { received } }

    /// How many bytes clients have taken so far: still growing after a client
    /// gave up means it is still reading.
    public var bytesWritten: Int { lock.withLock { written } }

    /// How many client connections have closed.
    public var connectionsClosed: Int { lock.withLock { closed } }

    fileprivate func count(_ bytes: Int) { lock.withLock { written += bytes } }
    fileprivate func countClosed() { lock.withLock { closed += 1 } }
    fileprivate func countReceived(_ bytes: Int) { lock.withLock { received += bytes } }

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

    func channelInactive(context: ChannelHandlerContext) {
        server.countClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        server.countReceived(unwrapInboundIn(data).readableBytes)
        guard !started else { return }
        started = true
        let script = server.script
        let server = self.server
        let loop = context.eventLoop
        let channel = context.channel
        @Sendable func write(_ bytes: [UInt8], then next: @escaping @Sendable () -> Void) {
            channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { result in
                guard case .success = result else {
                    channel.close(promise: nil)
                    return
                }
                server.count(bytes.count)
                next()
            }
        }
        @Sendable func repeatForever() {
            guard let piece = script.repeating, channel.isActive else {
                channel.close(promise: nil)
                return
            }
            write(piece) { loop.scheduleTask(in: script.interval) { repeatForever() } }
        }
        write(script.head) { repeatForever() }
    }
}

/// A key and a certificate for 127.0.0.1 that signs itself, made with the
/// `openssl` command for the test that uses it (so no key is kept in the
/// repository): no client trusts it, as none would trust a man in the middle.
public struct SelfSignedCertificate: Sendable {
    public let certificate: NIOSSLCertificate
    public let key: NIOSSLPrivateKey
    /// The certificate as PEM text, for a client told to trust it.
    public let certificatePEM: String

    /// For `127.0.0.1`, or for the DNS name `host` (a server reached through
    /// a proxy, whose name the client never resolves).
    public static func make(host: String = "127.0.0.1") async throws -> SelfSignedCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "authkit-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem")
        let certificateFile = directory.appendingPathComponent("cert.pem")
        let made = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", keyFile.path, "-out", certificateFile.path, "-days", "1",
                "-subj", "/CN=\(host)", "-addext",
                "subjectAltName=\(host.allSatisfy { $0.isNumber || $0 == "." } ? "IP" : "DNS"):\(host)",
            ])
        guard made.exit.status == 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "openssl req failed (status \(made.exit.status)); install the openssl package"
                ])
        }
        guard let certificate = try NIOSSLCertificate.fromPEMFile(certificateFile.path).first else {
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSLocalizedDescriptionKey: "openssl req wrote no certificate to \(certificateFile.path)"])
        }
        return SelfSignedCertificate(
            certificate: certificate, key: try NIOSSLPrivateKey(file: keyFile.path, format: .pem),
            certificatePEM: try String(contentsOf: certificateFile, encoding: .utf8))
    }
}
