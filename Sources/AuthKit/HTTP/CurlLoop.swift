#if canImport(CAuthKitLinux)
    import CAuthKitLinux
    import Synchronization

    /// The event loop ``CurlHTTPClient`` sends token-endpoint calls through:
    /// one thread, asleep in `epoll_wait` on the sockets of every transfer,
    /// driving a libcurl multi handle (`authkit_curl.c`).
    ///
    /// Why a second way beside ``CurlWorkers``: a worker is woken to send
    /// each request and sleeps again after it, and the waiting task is woken
    /// in turn, two thread hand-offs a request. Here the request is sent from
    /// the caller's own thread, and only the answer comes back through
    /// another: one hand-off (Benchmarks/README.md, "Where the time goes").
    /// That wins for a transfer alone (a command's refresh, an app's code
    /// exchange), and only then: with several at once, every answer waits
    /// for the one loop thread, where each worker reads its own, and the
    /// workers were faster. So a transfer goes through the loop only when no
    /// other transfer of the default transport is in flight (``enterAlone()``).
    /// The loop's connections are its own (a multi handle's cache), kept
    /// after each transfer for the next, as a worker's are.
    ///
    /// Why only for a body read whole, up to a cap (``FlowTransport``'s
    /// `send`: every token-endpoint call, and discovery, key sets,
    /// UserInfo): a loop cannot wait inside a
    /// transfer's write callback for a slow reader, as a worker does; it
    /// would have to pause the transfer, and libcurl 7.88 (Debian 12's)
    /// then keeps all that one socket read inflates to (curl issue 16280):
    /// a gzip bomb's 16 KiB read held as megabytes. A collected body needs
    /// no pause: it is held as it arrives, and the transfer stopped at the
    /// cap. A body a caller streams goes through the workers, unless its cap
    /// is within what a worker holds before streaming anyway
    /// (``CurlHTTPClient/collectsBodiesUpTo``): then it is collected too.
    final class CurlLoop: @unchecked Sendable {
        /// The process's loop, started with the first request that uses it
        /// (libcurl is loaded by then), for the process's life; nil when no
        /// epoll instance, eventfd, multi handle or thread could be made:
        /// the workers then send everything, as they can (a request that
        /// finds no thread says so).
        static let shared: CurlLoop? = CurlLoop()

        /// Connections the multi handle keeps open between transfers
        /// (`CURLMOPT_MAXCONNECTS`).
        static let keptConnections = 32

        let pointer: OpaquePointer

        /// Transfers of the default transport's shared pool and of this loop
        /// awaiting their answers now.
        private let inFlight = Atomic<Int>(0)

        /// Whether a transfer may go through the loop: only when it is the
        /// one transfer in flight (counted from 0 to 1), as one at a time
        /// is where the loop wins (loopback code exchanges one at a time:
        /// 230 against 284 µs each through the workers on the 2-core CI
        /// machine). With several at once the workers were faster (16 at
        /// once: 80 against 100 µs each; with at most one of the 16 on the
        /// loop, 89). ``leave()`` ends it.
        func enterAlone() -> Bool {
            inFlight.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
        }

        /// Counts a transfer sent through the workers; ``leave()`` ends it.
        func enter() {
            inFlight.add(1, ordering: .relaxed)
        }

        func leave() {
            inFlight.subtract(1, ordering: .relaxed)
        }

        private init?() {
            let made = authkit_curl_loop_new(Self.keptConnections, CurlHTTPClient.loopDone, CurlWorkers.threadName)
            guard let loop = made else { return nil }
            pointer = loop
        }

        /// A job whose easy handle is fresh or reset, or nil when libcurl
        /// could make no handle.
        func take() -> UnsafeMutablePointer<authkit_curl_job>? {
            guard let job = authkit_curl_loop_take(pointer) else { return nil }
            guard job.pointee.easy != nil else {
                authkit_curl_loop_give(pointer, job)
                return nil
            }
            return job
        }

        /// Hands a job back once its transfer has ended or was stopped.
        func give(_ job: UnsafeMutablePointer<authkit_curl_job>) {
            authkit_curl_loop_give(pointer, job)
        }
    }
#endif
