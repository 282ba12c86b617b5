#if canImport(CCurl)
import CCurl
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
/// A transfer goes to the idle worker that last spoke to its origin, when
/// there is one (its connection may still be open), else to the most recently
/// idle one. There is no limit on concurrent transfers (one thread each); at
/// most ``keptIdle`` idle workers wait for the next, the rest end.
final class CurlWorkers: @unchecked Sendable {
    static let shared = CurlWorkers(keptIdle: 8)
    /// Each worker thread's name, as `top -H` and `/proc/<pid>/task/*/comm` show it.
    static let threadName = "authkit.curl"

    /// What a transfer runs with: a worker's easy handle, or why there is none.
    enum Slot {
        case handle(UnsafeMutableRawPointer)
        /// No thread could be started, or libcurl made no handle: the reason,
        /// a clause for ``AuthKitError/network(url:reason:)``.
        case unavailable(String)
    }

    typealias Transfer = @Sendable (Slot) -> (@Sendable () -> Void)

    /// Idle workers kept for later transfers.
    let keptIdle: Int
    private let lock = ThreadLock()
    private var idle: [Worker] = []

    init(keptIdle: Int) { self.keptIdle = keptIdle }

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
            let code = worker.start(pool: self)
            guard code == 0 else {
                transfer(.unavailable("no thread could be started for the transfer (\(String(cString: strerror(code)))); the process is at its limit of threads or memory"))()
                return
            }
        }
        worker.origin = origin
        worker.submit(transfer)
    }

    /// How many workers wait for a transfer now (for tests).
    var idleCount: Int { lock.withLock { idle.count } }

    /// Called by a worker between transfers: true keeps it.
    fileprivate func returned(_ worker: Worker) -> Bool {
        lock.withLock {
            guard idle.count < keptIdle else { return false }
            idle.append(worker)
            return true
        }
    }

    /// One thread and its easy handle.
    fileprivate final class Worker: @unchecked Sendable {
        private let condition = ThreadLock.Condition()
        private var next: Transfer?
        /// Where its last transfer went; read and written under the pool's lock
        /// or before the worker is handed its transfer.
        var origin = ""

        /// Starts the worker's thread (pthread: FoundationEssentials has no
        /// `Thread`), named ``threadName``. Returns 0, or `pthread_create`'s
        /// error (EAGAIN: the process is at its limit of threads).
        func start(pool: CurlWorkers) -> Int32 {
            let body = Unmanaged.passRetained(Body { [self] in
                authkit_curl_name_thread(CurlWorkers.threadName)
                loop(pool: pool)
            }).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(&thread, nil, { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, body)
            guard started == 0 else {
                Unmanaged<Body>.fromOpaque(body).release()
                return started
            }
            pthread_detach(thread)
            return 0
        }

        /// What a new worker thread runs.
        private final class Body {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }

        func submit(_ transfer: @escaping Transfer) {
            condition.withLock {
                next = transfer
                condition.signal()
            }
        }

        private func loop(pool: CurlWorkers) {
            // nil when libcurl cannot make one; the transfer reports it.
            let handle = authkit_curl_easy_init()
            defer { if let handle { authkit_curl_easy_cleanup(handle) } }
            while true {
                let transfer = condition.withLock { () -> Transfer in
                    while next == nil { condition.wait() }
                    defer { next = nil }
                    return next!
                }
                let report = transfer(handle.map { .handle($0) } ?? .unavailable("libcurl could not make a transfer handle (curl_easy_init failed: out of memory?)"))
                var kept = false
                if let handle {
                    authkit_curl_easy_reset(handle)
                    kept = pool.returned(self)
                }
                report()
                guard kept else { return }
            }
        }
    }
}
#endif
