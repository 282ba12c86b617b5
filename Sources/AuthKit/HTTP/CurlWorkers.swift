#if canImport(CAuthKitLinux)
    import CAuthKitLinux
    import Synchronization
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

    /// The threads ``CurlHTTPClient`` runs its transfers on.
    ///
    /// `curl_easy_perform` blocks, so every transfer needs a thread; and an easy
    /// handle keeps the connections of its finished transfers open for the next
    /// one to the same host, port and TLS settings (RFC 9112 §9.3, persistent
    /// connections). So each worker keeps one thread and one easy handle from one
    /// transfer to the next: a second token request to the same endpoint skips
    /// the thread start, the TCP handshake and, over https, the TLS handshake.
    ///
    /// What carries over is only that cache: every transfer starts from
    /// `curl_easy_reset` and sets all of its options again (no redirects, the
    /// protocols, the timeouts), and libcurl reuses a connection only after a
    /// transfer that ended cleanly; one stopped mid-body (a cap, a deadline, a
    /// cancelled task) or answered with `Connection: close` is closed, not reused.
    ///
    /// A kept connection the server has meanwhile closed is found out when the
    /// next request gets no byte back on it; libcurl then sends the request once
    /// more on a new connection, POST included. For a token request that is the
    /// better outcome: a server that closed an idle connection never saw the
    /// request, and one that took the request and died before answering has
    /// spent the code or rotated the refresh token either way, so the answer
    /// is lost with or without the second attempt.
    ///
    /// Each worker's handle keeps its own connections; the handles share TLS
    /// sessions and DNS answers (a libcurl share), so a new connection
    /// resumes a TLS session instead of a full handshake. Connections are not
    /// shared: libcurl does not support sharing its connection cache between
    /// threads (CURLSHOPT_SHARE's documentation; a race checker saw one
    /// worker read a connection another was writing). A transfer goes to the
    /// idle worker that last spoke to its origin, when there is one, else to
    /// the most recently idle one, so the connection it left open is used.
    /// There is no limit on concurrent transfers (one thread each); at most
    /// ``keptIdle`` idle workers wait for the next, the rest end (and their
    /// connections with them), and each handle keeps at most
    /// ``keptConnections`` connections.
    final class CurlWorkers: @unchecked Sendable {
        static let shared = CurlWorkers(keptIdle: 16)
        /// Each worker thread's name, as `top -H` and `/proc/<pid>/task/*/comm` show it.
        static let threadName = "authkit.curl"

        /// What a transfer runs with: a worker's easy handle, or why there is none.
        enum Slot {
            case handle(UnsafeMutableRawPointer)
            /// No thread could be started, or libcurl made no handle: the reason,
            /// a clause for ``AuthKitError``.
            case unavailable(String)
        }

        typealias Transfer = @Sendable (Slot) -> (@Sendable () -> Void)

        /// Starts a thread running the body it is given; returns 0 or
        /// `pthread_create`'s error. Tests pass one that fails, or one that
        /// records the threads it starts.
        typealias ThreadStarter = @Sendable (@escaping @Sendable () -> Void) -> Int32

        /// Idle workers kept for later transfers.
        let keptIdle: Int
        private let startThread: ThreadStarter
        private let lock = ThreadLock()
        private var idle: [Worker] = []
        private var closed = false

        /// The shared caches (TLS sessions, DNS), made with the first transfer
        /// (libcurl is loaded by then); nil when this libcurl cannot share them.
        private var share: OpaquePointer?
        private var shareMade = false

        /// Connections a handle keeps open (`CURLOPT_MAXCONNECTS`; libcurl's
        /// default is 5).
        var keptConnections: Int { 5 }

        init(keptIdle: Int, startThread: @escaping ThreadStarter = CurlWorkers.startDetachedThread) {
            self.keptIdle = keptIdle
            self.startThread = startThread
        }

        deinit {
            // Every worker has ended (each holds the pool), and its handle with it.
            if let share { authkit_curl_share_free(share) }
        }

        /// The caches a worker's handle joins before each transfer.
        func sharedCaches() -> OpaquePointer? {
            lock.withLock {
                if !shareMade {
                    shareMade = true
                    share = authkit_curl_share_new()
                }
                return share
            }
        }

        /// Ends the idle workers, and each busy one after its transfer. The
        /// shared pool lives as long as the process; a pool made for a test is
        /// closed when the test ends, so its threads do not stay parked.
        func close() {
            let ending = lock.withLock { () -> [Worker] in
                closed = true
                defer { idle.removeAll() }
                return idle
            }
            for worker in ending { worker.stop() }
        }

        /// A detached pthread (FoundationEssentials has no `Thread`), named
        /// ``threadName``.
        static func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
            let box = Unmanaged.passRetained(
                ThreadBody {
                    authkit_curl_name_thread(CurlWorkers.threadName)
                    // A worker woken by its answer no longer preempts the
                    // thread on the core (most often a pool thread running
                    // the callers' tasks, which then hands the core back
                    // and forth with every answer); it runs at once when a
                    // core is free, else when the running thread's turn
                    // ends. 16 exchanges at once: 24,600 → 30,000 in 2 s,
                    // TLS GETs 122 → 138 batches (six alternating rounds,
                    // docs/performance.md); one at a time, unchanged.
                    // Refused (a sandbox's seccomp), the thread runs as any.
                    _ = authkit_curl_schedule_as_batch()
                    body()
                }
            ).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { raw in
                    Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
                    return nil
                }, box)
            guard started == 0 else {
                Unmanaged<ThreadBody>.fromOpaque(box).release()
                return started
            }
            pthread_detach(thread)
            return 0
        }

        /// What a new thread runs, passed through `pthread_create`'s one pointer.
        private final class ThreadBody {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }

        /// Runs `transfer` on an idle worker's thread, or on a new worker's.
        /// `transfer` gets an easy handle freshly reset or new (or the reason
        /// there is none) and returns what reports its outcome: the
        /// worker is back among the idle ones before that runs, so the caller's
        /// next request finds it, and the connection it keeps.
        func run(origin: String, _ transfer: @escaping Transfer) {
            let idleWorker = lock.withLock { () -> Worker? in
                let index = idle.lastIndex { $0.origin == origin } ?? idle.indices.last
                return index.map { idle.remove(at: $0) }
            }
            let worker: Worker
            if let idleWorker {
                worker = idleWorker
            } else {
                worker = Worker()
                let code = startThread { [self] in worker.loop(pool: self) }
                guard code == 0 else {
                    transfer(
                        .unavailable(
                            "no thread could be started for the transfer (\(String(cString: strerror(code)))); the process is at its limit of threads or memory"
                        ))()
                    return
                }
            }
            worker.origin = origin
            worker.submit(transfer)
        }

        /// How long a worker that has just finished a transfer keeps
        /// looking for the next before it sleeps (one worker at a time:
        /// ``spinning``).
        ///
        /// Handing a transfer to a sleeping worker wakes its thread, and on
        /// a virtual machine the wake-up is most of what a request costs
        /// the caller's thread: `pthread_cond_signal` alone was a tenth of
        /// the samples of 200 GETs over TLS one after another. A caller
        /// that sends its next request within this time (the next page of
        /// an API, a request after a refresh) hands it to a thread that is
        /// still awake. At most this much CPU is spent after a transfer
        /// that nothing follows; the caller does not wait for it.
        static let spinBudget = Duration.microseconds(50)
        /// Whether a worker is looking for its next transfer (at most one:
        /// many at once would take the cores the callers need).
        fileprivate let spinning = Atomic<Bool>(false)

        /// How many workers wait for a transfer now (for tests).
        var idleCount: Int { lock.withLock { idle.count } }

        /// Called by a worker between transfers: true keeps it.
        fileprivate func returned(_ worker: Worker) -> Bool {
            lock.withLock {
                guard !closed, idle.count < keptIdle else { return false }
                idle.append(worker)
                return true
            }
        }

        /// One thread and its easy handle.
        fileprivate final class Worker: @unchecked Sendable {
            private let condition = ThreadLock.Condition()
            private var next: Transfer?
            private var stopping = false
            /// Set with `next` or `stopping`, for the spinning worker to
            /// see without the lock.
            private let woken = Atomic<Bool>(false)
            /// Where its last transfer went; read and written under the pool's lock
            /// or before the worker is handed its transfer.
            var origin = ""

            func submit(_ transfer: @escaping Transfer) {
                condition.withLock {
                    next = transfer
                    woken.store(true, ordering: .releasing)
                    condition.signal()
                }
            }

            /// Ends the thread once it is idle (the pool has let go of it).
            func stop() {
                condition.withLock {
                    stopping = true
                    woken.store(true, ordering: .releasing)
                    condition.signal()
                }
            }

            /// What the worker's thread runs: transfers, until the pool keeps it
            /// no longer or stops it.
            func loop(pool: CurlWorkers) {
                // nil when libcurl cannot make one; the transfer reports it.
                let handle = authkit_curl_easy_init()
                defer { if let handle { authkit_curl_easy_cleanup(handle) } }
                var spin = false
                while true {
                    if spin { spinUntilWoken(pool) }
                    let waiting = condition.withLock { () -> Transfer? in
                        while next == nil, !stopping { condition.wait() }
                        woken.store(false, ordering: .relaxed)
                        defer { next = nil }
                        return next
                    }
                    guard let transfer = waiting else { return }
                    if let handle {
                        // Set again for every transfer, as every other option
                        // is after a reset (which keeps the share, not MAXCONNECTS).
                        _ = authkit_curl_use_share(handle, pool.sharedCaches())
                        _ = authkit_curl_set_long(handle, CURLOPT_MAXCONNECTS, pool.keptConnections)
                    }
                    let report = transfer(
                        handle.map { .handle($0) }
                            ?? .unavailable(
                                "libcurl could not make a transfer handle (curl_easy_init failed: out of memory?)"))
                    var kept = false
                    if let handle {
                        authkit_curl_easy_reset(handle)
                        kept = pool.returned(self)
                    }
                    report()
                    guard kept else { return }
                    spin = true
                }
            }

            /// Looks for the next transfer for at most ``spinBudget``,
            /// yielding the core between looks, unless another worker is
            /// looking already.
            private func spinUntilWoken(_ pool: CurlWorkers) {
                guard pool.spinning.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
                else { return }
                defer { pool.spinning.store(false, ordering: .releasing) }
                let end = ContinuousClock.now.advanced(by: CurlWorkers.spinBudget)
                while !woken.load(ordering: .acquiring), ContinuousClock.now < end { sched_yield() }
            }
        }
    }
#endif
