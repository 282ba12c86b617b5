#if canImport(CAuthKitLinux)
    import CAuthKitLinux
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
    import HTTPTypes

    /// ``HTTPClient`` on libcurl's easy interface: the default on Linux.
    ///
    /// It is the libcurl that FoundationNetworking's `URLSession` wraps, driven
    /// directly because `URLSession` on Linux cannot bound what a hostile server
    /// makes it hold: it always turns on content decoding, inflates each socket
    /// read whole and queues every inflated chunk for its delegate without
    /// backpressure, so a 13 MB gzip body that inflates to 2 GiB was measured to
    /// cost 2.1 GB of memory before any reader could stop it. Here the body
    /// arrives through a write callback that AuthKit controls:
    /// - decoding (every one libcurl has: gzip, deflate, br, zstd) stays on, and each inflated chunk waits until the
    ///   reader has room for it (a few chunks are buffered), so memory stays near
    ///   what the reader keeps, and a cap stops the transfer mid-inflation;
    /// - redirects are never followed, as ``HTTPClient`` requires;
    /// - stopping the body (a cap, a deadline, a cancelled task) aborts the transfer
    ///   at the next callback; `timeout` aborts a transfer that sends under a byte a
    ///   second for that long (libcurl's low-speed limit, an average, not silence alone).
    /// Only `http` and `https` are spoken, trusting the system's certificate
    /// authorities, or those ``CertificateAuthorities/environment`` names.
    package struct CurlHTTPClient: ParsedURLHTTPClient {
        /// Seconds to connect, and the longest a transfer may send under a byte a second.
        package var timeout: TimeInterval

        /// The threads, and easy handles with their open connections, transfers run on.
        let workers: CurlWorkers

        package init(timeout: TimeInterval = 30) {
            self.init(timeout: timeout, workers: .shared)
        }

        /// Each transfer is stopped by its request's deadline scope (``CurlTransfer``).
        package var stopsAtDeadlineScope: Bool { true }

        /// A body capped within what a transfer holds before it streams
        /// (``CurlTransfer/largestHeldBody``) is collected: alone in flight, it
        /// then goes through the event loop (``CurlLoop``), one thread
        /// hand-off a request where a worker takes two (200 GETs over TLS one
        /// at a time: a fifth less CPU a GET, Benchmarks/README.md).
        package var collectsBodiesUpTo: Int { CurlTransfer.largestHeldBody }

        /// With a pool of its own (tests count connections on one).
        init(timeout: TimeInterval, workers: CurlWorkers) {
            self.timeout = timeout
            self.workers = workers
        }

        package func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
            // `request.url` is rebuilt from its parts at each use: read once.
            guard let url = request.url else {
                throw AuthKitError.network(
                    url: "(no URL)", reason: .init(.invalidRequest, "the request has no absolute URL"))
            }
            return try await send(request, url: url, body: body)
        }

        package func send(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (
            HTTPResponse, HTTPResponseBody
        ) {
            try Self.loadLibrary(display: url.redactedForLogs)
            if url.scheme?.lowercased() == "https", let problem = CertificateAuthorities.environmentProblem {
                throw AuthKitError.network(url: url.redactedForLogs, reason: .init(.tlsFailure, problem))
            }
            let transfer = CurlTransfer(request: request, url: url, body: body, timeout: timeout)
            guard workers === CurlWorkers.shared, let loop = CurlLoop.shared else {
                return try await transfer.start(on: workers)
            }
            loop.enter()
            defer { loop.leave() }
            return try await transfer.start(on: workers)
        }

        /// A body read whole, at most `limit` bytes of it (token-endpoint
        /// calls): sent through the event loop (``CurlLoop``), which needs
        /// no thread of the transfer's own. The answer is held as it arrives,
        /// never paused (pausing made libcurl 7.88 hold all that one read
        /// inflates to), and stopped past `limit` bytes: a body of `limit + 1`
        /// comes back for the caller's cap to refuse. A pool other than the
        /// shared one (tests), or no loop, sends it as any request.
        package func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int) async throws
            -> (HTTPResponse, HTTPResponseBody)
        {
            try Self.loadLibrary(display: url.redactedForLogs)
            guard workers === CurlWorkers.shared, let loop = CurlLoop.shared, loop.enterAlone() else {
                return try await send(request, url: url, body: body)
            }
            defer { loop.leave() }
            return try await send(request, url: url, body: body, collectingAtMost: limit, on: loop)
        }

        /// Through `loop`, whatever else is in flight (tests use it so).
        func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int, on loop: CurlLoop)
            async throws -> (HTTPResponse, HTTPResponseBody)
        {
            if url.scheme?.lowercased() == "https", let problem = CertificateAuthorities.environmentProblem {
                throw AuthKitError.network(url: url.redactedForLogs, reason: .init(.tlsFailure, problem))
            }
            let transfer = CurlTransfer(request: request, url: url, body: body, timeout: timeout, collecting: limit)
            return try await transfer.start(on: loop)
        }
    }

    extension CurlHTTPClient {
        /// The loop's `done`: how a transfer ended, on the loop's thread (or
        /// the one that added it, for one that ended as it was added).
        static let loopDone: authkit_curl_done_callback = { context, code in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeRetainedValue().ended(code)
        }

        /// Loads libcurl if ``preloadDefaultHTTPClient()`` has not (see
        /// `authkit_curl.h` for why it is not linked), or waits for that load to
        /// finish. A machine without it gets an error that says what to install.
        static func loadLibrary(display: @autoclosure () -> String) throws {
            guard authkit_curl_load(nil, 0) != 0 else { return }
            var reason = [CChar](repeating: 0, count: 512)
            _ = authkit_curl_load(&reason, reason.count)
            let text = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw AuthKitError.network(url: display(), reason: .init(.transportUnavailable, text))
        }
    }

    /// One request on a worker's thread (``CurlWorkers``): `curl_easy_perform`
    /// blocks, and its callbacks hand the head and the body chunks to the async side.
    private final class CurlTransfer: @unchecked Sendable {
        /// The kind of failure a libcurl code stands for, where no more
        /// particular message was written for it.
        static func kind(of code: CURLcode) -> AuthKitError.NetworkFailure.Kind {
            switch code {
            case CURLE_OPERATION_TIMEDOUT: .timedOut
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
                CURLE_SSL_CACERT_BADFILE:
                .tlsFailure
            case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: .connectionClosed
            case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY: .malformedAnswer
            default: .connectionFailed
            }
        }

        /// Chunks buffered for the reader before libcurl is made to wait.
        static let bufferedChunks = 8

        let request: HTTPRequest
        let url: URL
        let body: Data?
        let timeout: TimeInterval
        /// `timeout` in whole seconds, from 1 to 2,147,483 (`INT_MAX / 1000`,
        /// the most `CURLOPT_CONNECTTIMEOUT` takes): `Int(timeout)` stopped
        /// the process for a timeout of `.infinity` (or NaN, which gets 1).
        var timeoutSeconds: Int {
            guard timeout >= 1 else { return 1 }
            return timeout < 2_147_483 ? Int(timeout) : 2_147_483
        }
        /// The URL as errors show it, made only when one is (not per request).
        var display: String { url.redactedForLogs }

        private let lock = ThreadLock()
        private var headContinuation: CheckedContinuation<(HTTPResponse, HTTPResponseBody), any Error>?
        private var cancelled = false
        /// The deadline of the scope the transfer started in, if any.
        private var deadline: ContinuousClock.Instant?
        /// The head as read so far (transfer's thread only).
        private var headReader = ResponseHeadReader()
        /// Why the head was refused (read on the transfer's thread only).
        private var refusedHead: String?
        /// The bytes of header lines read so far, interim heads and trailers
        /// included (transfer's thread only), against ``largestHead``.
        private var headBytes = 0
        /// Whether the final head has been read (transfer's thread only).
        private var headEnded = false
        /// Whether the transfer stopped because its body was not read by a
        /// second past its deadline (transfer's thread only).
        private var unreadPastTheDeadline = false
        /// Whether that head was taken, to be handed over (transfer's thread only).
        private var headAccepted = false
        /// Whether the head has gone to the caller (transfer's thread only).
        private var headDelivered = false
        /// The body read before the head was handed over (transfer's thread
        /// only): an answer that ends within ``largestHeldBody`` is handed over
        /// whole, as a complete ``HTTPResponseBody``, with no stream to read.
        private var held = Data()
        /// Past this, the head is handed over and the body streamed.
        static let largestHeldBody = 64 << 10
        /// No real answer's header comes near this; libcurl's own limit
        /// (300 KiB in all) is reported as "Failure when receiving data from the
        /// peer", which does not say what the server did.
        static let largestHead = 128 << 10
        /// What the body's stream is fed through, once the head has gone
        /// before the body's end (``deliverHead()``; under `lock`): made only
        /// then. An answer handed over whole (a token's, most API answers)
        /// needs none, and a stream made for every transfer, with the weak
        /// reference its end handler keeps, was 3% of the CPU of a GET at 16
        /// at once (perf, docs/performance.md). nil for a reader that
        /// collects the body (``collectLimit``), which gets it whole.
        private var continuation: AsyncThrowingStream<Data, any Error>.Continuation?
        /// For a caller that reads the body whole: the most bytes it takes.
        /// The body is held as it comes (not streamed, never paused), and the
        /// transfer stopped once it holds one byte more. nil: streamed.
        let collectLimit: Int?
        /// Whether the transfer stopped past ``collectLimit`` (transfer's thread only).
        private var collectedPastLimit = false
        /// The request's header lines, which libcurl reads until the transfer ends.
        private var headerLines: UnsafeMutablePointer<curl_slist>?
        /// The event loop's job that runs the transfer, while it runs there
        /// (under `lock`): what cancelling it stops.
        private var job: UnsafeMutablePointer<authkit_curl_job>?

        init(request: HTTPRequest, url: URL, body: Data?, timeout: TimeInterval, collecting limit: Int? = nil) {
            self.request = request
            self.url = url
            self.body = body
            self.timeout = timeout
            collectLimit = limit
        }

        /// On a worker's thread of its own, blocking there.
        func start(on workers: CurlWorkers) async throws -> (HTTPResponse, HTTPResponseBody) {
            try await start(.workers(workers))
        }

        /// On the event loop, the request sent from this thread.
        func start(on loop: CurlLoop) async throws -> (HTTPResponse, HTTPResponseBody) {
            try await start(.loop(loop))
        }

        private enum Runner {
            case workers(CurlWorkers)
            case loop(CurlLoop)
        }

        private func start(_ runner: Runner) async throws -> (HTTPResponse, HTTPResponseBody) {
            // A deadline the caller's task runs under (``DeadlineScope``)
            // stops this transfer as cancelling the task would, and libcurl
            // is held to it too (CURLOPT_TIMEOUT_MS), so the worker is free
            // on time, not at libcurl's next callback.
            if let scope = DeadlineScope.current {
                lock.withLock { deadline = scope.deadline }
                scope.onExpiry { [weak self] in self?.cancel() }
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { head in
                    // Stopped before it started (a deadline passed, the task
                    // was cancelled): nothing is sent.
                    let stopped = lock.withLock { () -> Bool in
                        if !cancelled { headContinuation = head }
                        return cancelled
                    }
                    if stopped {
                        head.resume(throwing: CancellationError())
                        return
                    }
                    switch runner {
                    case .workers(let workers):
                        workers.run(origin: url.origin) { slot in
                            let failure = self.perform(on: slot)
                            return { self.finish(failure) }
                        }
                    case .loop(let loop):
                        send(through: loop)
                    }
                }
            } onCancel: {
                cancel()
            }
        }

        // MARK: - The transfer on the event loop

        /// Configures a loop job's handle here and adds it: libcurl writes
        /// the request before this returns (on a kept connection), and the
        /// loop's thread reads the answer. Each way it ends, ``finish(_:)``
        /// reports it: from ``ended(_:)``, or here.
        private func send(through loop: CurlLoop) {
            guard let job = loop.take() else {
                return finish(
                    AuthKitError.network(
                        url: display,
                        reason: .init(
                            .transportUnavailable,
                            "libcurl could not make a transfer handle (curl_easy_init failed: out of memory?)")))
            }
            let handle = job.pointee.easy!
            _ = authkit_curl_use_share(handle, CurlWorkers.shared.sharedCaches())
            if let problem = configure(handle) {
                releaseHeaderLines()
                loop.give(job)
                return finish(problem)
            }
            // Cancelled meanwhile: nothing is sent. Once `job` is set, a
            // cancel stops the transfer on the loop instead; one that comes
            // before the loop has it running stops it before its request is
            // written (the pre-request callback, ``configure(_:)``).
            let proceed = lock.withLock { () -> Bool in
                guard !cancelled else { return false }
                self.job = job
                return true
            }
            guard proceed else {
                releaseHeaderLines()
                loop.give(job)
                return finish(CancellationError())
            }
            // Held by the loop until it calls back (or a cancel stops it).
            let context = Unmanaged.passRetained(self).toOpaque()
            let added = authkit_curl_loop_add(loop.pointer, job, context)
            guard added == CURLM_OK else {
                Unmanaged<CurlTransfer>.fromOpaque(context).release()
                lock.withLock { self.job = nil }
                releaseHeaderLines()
                loop.give(job)
                return finish(
                    AuthKitError.network(
                        url: display,
                        reason: .init(
                            .transportUnavailable,
                            "libcurl could not start the transfer (\(String(cString: authkit_curl_multi_strerror(added))))"
                        )))
            }
            // Cancelled while it was added: stopped now, if it still runs.
            if isCancelled { stop(on: loop) }
        }

        /// How the transfer ended, from the loop (``CurlHTTPClient/loopDone``).
        fileprivate func ended(_ code: CURLcode) {
            guard let loop = CurlLoop.shared else { return }
            let job = lock.withLock { () -> UnsafeMutablePointer<authkit_curl_job>? in
                defer { self.job = nil }
                return self.job
            }
            releaseHeaderLines()
            let failure = failure(for: code)
            // Back for the next transfer before this one is reported.
            if let job { loop.give(job) }
            finish(failure)
        }

        /// Stops the transfer on the loop, unless it has ended: the loop then
        /// calls back no more, and the job goes back here.
        private func stop(on loop: CurlLoop) {
            guard let job = lock.withLock({ self.job }) else { return }
            let context = Unmanaged.passUnretained(self).toOpaque()
            guard authkit_curl_loop_cancel(loop.pointer, job, context) == 1 else { return }
            lock.withLock { self.job = nil }
            releaseHeaderLines()
            loop.give(job)
            // The loop's hold, taken when it was added.
            Unmanaged<CurlTransfer>.fromOpaque(context).release()
        }

        /// Stops the transfer: libcurl aborts it at its next callback, and
        /// whoever waits is answered now: the head, if it has not come, and
        /// the body's reader fail with `CancellationError` (the caller's
        /// deadline or cancellation then names the reason).
        func cancel() {
            let stream = lock.withLock { () -> AsyncThrowingStream<Data, any Error>.Continuation? in
                cancelled = true
                return continuation
            }
            stream?.finish(throwing: CancellationError())
            let head = lock.withLock { () -> CheckedContinuation<(HTTPResponse, HTTPResponseBody), any Error>? in
                defer { headContinuation = nil }
                return headContinuation
            }
            head?.resume(throwing: CancellationError())
            if let loop = CurlLoop.shared, collectLimit != nil { stop(on: loop) }
        }

        private func markCancelled() {
            lock.withLock { cancelled = true }
        }

        private var isCancelled: Bool { lock.withLock { cancelled } }

        // MARK: - The transfer (on a worker's thread)

        /// Runs the transfer on the slot's easy handle, a worker's, reset: every
        /// option is set here, for this request alone (see ``CurlWorkers``).
        /// Returns how it failed (a slot without a handle fails with its
        /// reason), or nil; ``finish(_:)`` reports it.
        private func perform(on slot: CurlWorkers.Slot) -> (any Error)? {
            // Cancelled while it waited for its worker: nothing is sent. On a
            // kept connection libcurl writes the request before any callback
            // could stop it, and a code exchange or refresh given up on
            // would still spend the code or rotate the refresh token.
            if isCancelled { return CancellationError() }
            let handle: UnsafeMutableRawPointer
            switch slot {
            case .handle(let ready): handle = ready
            case .unavailable(let reason):
                return AuthKitError.network(url: display, reason: .init(.transportUnavailable, reason))
            }
            defer { releaseHeaderLines() }
            if let problem = configure(handle) { return problem }
            return failure(for: authkit_curl_easy_perform(handle))
        }

        /// Sets every option of the transfer on `handle`, fresh or reset, for
        /// this request alone; nil, or why it cannot be sent. The header lines
        /// stay allocated until ``releaseHeaderLines()``.
        private func configure(_ handle: UnsafeMutableRawPointer) -> (any Error)? {
            var headers: UnsafeMutablePointer<curl_slist>?
            // Kept by the transfer as libcurl reads them (until it ends),
            // even a partial list, so that it is freed.
            defer { headerLines = headers }
            // Each line added, or none sent: out of memory, curl_slist_append
            // answers NULL and keeps the list, which was then lost (leaked)
            // and the request sent with only some of its fields.
            var complete = true
            func add(_ line: String) {
                guard complete, let longer = line.withCString({ authkit_curl_slist_append(headers, $0) }) else {
                    complete = false
                    return
                }
                headers = longer
            }
            var hasContentType = false
            for field in request.headerFields.withoutFraming {
                if field.name == .contentType { hasContentType = true }
                // libcurl removes a header given as "Name:" with nothing after
                // it (its own default's off switch); "Name;" sends it empty.
                add(field.value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(field.value)")
            }
            add("Expect:") // no 100-continue round trip
            let method = request.method.rawValue
            // A POST, PUT or PATCH with no body sends an empty one, framed
            // (`Content-Length: 0`, RFC 9110 §8.6): with only its method
            // set, libcurl sent no framing, and some servers answer 411.
            let body = body ?? (["POST", "PUT", "PATCH"].contains(method) ? Data() : nil)
            // Nor the form type libcurl gives a body the caller typed none for.
            if body != nil, !hasContentType { add("Content-Type:") }
            guard complete else {
                return AuthKitError.network(
                    url: display,
                    reason: .init(
                        .transportUnavailable, "libcurl could not hold the request's header fields (out of memory)"))
            }

            let context = Unmanaged.passUnretained(self).toOpaque()
            // A text option, handed over in place (libcurl copies it, as it
            // does every string option since 7.17): a String passed as a C
            // pointer is copied into an array first, an allocation per
            // option per request (counted). nil clears the option.
            func setText(_ option: CURLoption, _ text: String?) -> CURLcode {
                guard let text else { return authkit_curl_set_pointer(handle, option, nil) }
                return text.withCString { authkit_curl_set_pointer(handle, option, $0) }
            }
            _ = setText(CURLOPT_URL, url.absoluteString)
            // The path as given: libcurl otherwise removes `.` and `..`
            // segments, and an OAuth 1.0a signature is over the path given
            // (RFC 5849 §3.4.1.2), as is whatever the caller meant.
            _ = authkit_curl_set_long(handle, CURLOPT_PATH_AS_IS, 1)
            // http and https only, whatever the URL or a redirect says. Before
            // libcurl 7.85 the option is unknown: the older bitmask then.
            if setText(CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK {
                _ = authkit_curl_set_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS))
            }
            // Through an https proxy, the proxy's answer to CONNECT ("200
            // Connection established", and whatever headers it adds) is not
            // the server's: without this, libcurl hands it to the header
            // callback first, and it was taken for the answer's head.
            _ = authkit_curl_set_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
            // SSL_CERT_FILE or SSL_CERT_DIR replaces the system's authorities
            // (CertificateAuthorities): the one not given is turned off, or
            // this libcurl's built-in CA path would still be trusted.
            let authorities = CertificateAuthorities.environment
            if authorities.file != nil || authorities.directory != nil {
                _ = setText(CURLOPT_CAINFO, authorities.file)
                _ = setText(CURLOPT_CAPATH, authorities.directory)
            }
            if url.isLoopback {
                // This machine is reached directly. libcurl sends through the
                // proxy `http_proxy` names, and with no `no_proxy` for 127.0.0.1
                // a plain-http loopback request, which AuthKit sends a
                // credential over because it stays here, left the machine in
                // the clear (and reached the proxy's own 127.0.0.1, not this one).
                _ = setText(CURLOPT_NOPROXY, "*")
            }
            _ = authkit_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = authkit_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            // every decoding libcurl has; bounded below
            _ = setText(CURLOPT_ACCEPT_ENCODING, "")
            _ = authkit_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, timeoutSeconds)
            _ = authkit_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = authkit_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, timeoutSeconds)
            // A second past the scope's deadline: the watchdog's error, which
            // names the time the request was given, comes first. A deadline
            // weeks away (or set far off to mean none) gives libcurl no
            // limit of its own; the watchdog still stops the transfer at it.
            if let deadline = lock.withLock({ deadline }),
                let milliseconds = (deadline - ContinuousClock.now + .seconds(1)).int32Milliseconds
            {
                _ = authkit_curl_set_long(handle, CURLOPT_TIMEOUT_MS, milliseconds)
            }
            _ = authkit_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headers)
            if method == "HEAD" {
                _ = authkit_curl_set_long(handle, CURLOPT_NOBODY, 1)
            } else if let body {
                _ = authkit_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                body.withUnsafeBytes {
                    _ = authkit_curl_set_pointer(
                        handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
                }
                _ = setText(CURLOPT_CUSTOMREQUEST, method)
            } else if method != "GET" {
                _ = setText(CURLOPT_CUSTOMREQUEST, method)
            }
            _ = authkit_curl_set_data_callback(handle, CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.header(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
            }
            _ = authkit_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
            _ = authkit_curl_set_data_callback(handle, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.data(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
            }
            _ = authkit_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
            _ = authkit_curl_set_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = authkit_curl_set_progress_callback(handle) { context, expected, received, _, _ in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                    .progress(expected: expected, received: received) ? 0 : 1
            }
            _ = authkit_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context)
            // Connected, about to write the request: a transfer cancelled
            // since it was handed over (between the checks before it was
            // added or performed and libcurl's first step, where a kept
            // connection has it written before any other callback) stops
            // here, so that a code exchange or refresh given up on spends
            // nothing. 1 is CURL_PREREQFUNC_ABORT.
            _ = authkit_curl_set_prereq_callback(handle) { context, _, _, _, _ in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().isCancelled ? 1 : 0
            }
            _ = authkit_curl_set_pointer(handle, CURLOPT_PREREQDATA, context)

            return nil
        }

        private func releaseHeaderLines() {
            authkit_curl_slist_free_all(headerLines)
            headerLines = nil
        }

        /// What a transfer that ended with `code` failed with, or nil.
        private func failure(for code: CURLcode) -> (any Error)? {
            // Stopped past a collecting caller's cap, with one byte more than
            // it takes: its refusal names the cap.
            if collectedPastLimit { return nil }
            if code == CURLE_OK {
                return nil
            } else if let refusedHead {
                return AuthKitError.network(url: display, reason: .init(.malformedAnswer, refusedHead))
            } else if isCancelled {
                return CancellationError()
            } else if unreadPastTheDeadline {
                return AuthKitError.network(
                    url: display,
                    reason: .init(.timedOut, "its answer was not read before the request's deadline, and was stopped"))
            } else if code == CURLE_OUT_OF_MEMORY, !headEnded {
                // libcurl's words for a header line over its 100 KiB limit
                // (CURL_MAX_HTTP_HEADER), which it refuses before handing it over.
                return AuthKitError.network(
                    url: display,
                    reason: .init(
                        .malformedAnswer,
                        """
                        a line of its header is longer than 100 KiB, which no real answer's is; libcurl stopped reading \
                        (it reports this as "Out of memory")
                        """))
            } else if code == CURLE_OPERATION_TIMEDOUT {
                // The connection, or the low-speed limit (under a byte a second
                // for `timeout`): a server dripping a byte a second was said to
                // have sent "no data" while it was sending.
                return AuthKitError.network(
                    url: display,
                    reason: .init(
                        .timedOut,
                        headBytes == 0
                            ? "no answer for \(timeoutSeconds) s"
                            : "it sent less than a byte a second for \(timeoutSeconds) s, and was cut off"))
            } else if code == CURLE_PARTIAL_FILE {
                // libcurl's own words, "Transferred a partial file", suggest a download tool.
                return AuthKitError.network(
                    url: display,
                    reason: .init(.connectionClosed, "the server closed the connection before the end of its answer"))
            } else if code == CURLE_PEER_FAILED_VERIFICATION {
                // libcurl's words name SSH keys as well, which never apply here.
                return AuthKitError.network(
                    url: display,
                    reason: .init(
                        .tlsFailure,
                        "the server's TLS certificate could not be verified (self-signed, expired, for another host, or someone in the middle); nothing was sent"
                    ))
            } else if code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_WEIRD_SERVER_REPLY {
                // Only http and https are allowed, so "Unsupported protocol" here
                // means the answer was not HTTP (no status line, or a malformed one).
                return AuthKitError.network(
                    url: display,
                    reason: .init(
                        .malformedAnswer,
                        "the server's answer is not HTTP AuthKit can read (libcurl: \(String(cString: authkit_curl_easy_strerror(code))))"
                    ))
            } else {
                return AuthKitError.network(
                    url: display, reason: .init(Self.kind(of: code), String(cString: authkit_curl_easy_strerror(code))))
            }
        }

        /// One header line, read into the head (``ResponseHeadReader``, by
        /// libcurl's rules); the final head, once it has ended, is handed over.
        private func header(_ line: UnsafeRawBufferPointer) -> Bool {
            // After the final head, libcurl hands over a chunked body's
            // trailer fields (RFC 9112 §7.1.2) the same way: they are not the
            // head's (a trailing Content-Type or WWW-Authenticate would
            // otherwise be read as if the server had sent it first), and
            // AuthKit uses none. Still counted against the head's limit.
            if headEnded {
                headBytes += line.count
                if headBytes > Self.largestHead {
                    refusedHead =
                        "its trailer fields are longer than \(Self.largestHead >> 10) KiB, which no real answer's are; nothing more was read"
                    return false
                }
                return !isCancelled
            }
            headBytes += line.count
            if headBytes > Self.largestHead {
                refusedHead =
                    "its header is longer than \(Self.largestHead >> 10) KiB, which no real answer's is; nothing more was read"
                return false
            }
            switch headReader.read(line) {
            case .reading: break
            case .ended:
                headEnded = true
                // Handed over with the body, or at the end of this read (see `progress`).
                headAccepted = true
            case .refused(let reason):
                refusedHead = reason
                return false
            }
            return !isCancelled
        }

        /// One decoded chunk: held while the head is (up to
        /// ``largestHeldBody``); then streamed, waiting while the reader's
        /// buffer is full. Stops the transfer (returns false) once the reader is gone.
        private func data(_ bytes: UnsafeRawBufferPointer) -> Bool {
            // A body with no final head taken is nobody's to read: the
            // transfer stops instead of streaming to no one until its
            // deadline. (A guard: the head is read by libcurl's rules above,
            // so no answer known to reach it.)
            guard headAccepted else {
                refusedHead = "it sent a body before a complete final head"
                return false
            }
            if let collectLimit {
                // Held whole, up to one byte past the cap.
                let room = collectLimit + 1 - held.count
                guard bytes.count <= room else {
                    held.append(contentsOf: bytes.prefix(room))
                    collectedPastLimit = true
                    return false
                }
                held.append(contentsOf: bytes)
                return !isCancelled
            }
            if !headDelivered, held.count + bytes.count <= Self.largestHeldBody {
                held.append(contentsOf: bytes)
                return !isCancelled
            }
            deliverHead()
            return stream(Data(bytes))
        }

        private func stream(_ chunk: Data) -> Bool {
            guard let continuation = lock.withLock({ continuation }) else { return false }
            var chunk = chunk
            // Waiting here, inside libcurl's write callback, libcurl cannot
            // apply its own time limit: a reader that holds the body unread
            // (its request's deadline scope already left) held this worker,
            // its connection and the wake-ups below until it read again.
            // Given up as libcurl would have, a second past the deadline.
            let giveUp = lock.withLock { deadline }.map { $0 + .seconds(1) }
            while true {
                if isCancelled { return false }
                if let giveUp, ContinuousClock.now >= giveUp {
                    unreadPastTheDeadline = true
                    return false
                }
                switch continuation.yield(chunk) {
                case .enqueued: return true
                case .terminated: return false
                case .dropped(let back):
                    chunk = back
                    usleep(1000)
                @unknown default: return false
                }
            }
        }

        /// Called by libcurl after each read from the socket (and about once a
        /// second while nothing arrives): false stops the transfer.
        ///
        /// A head that has arrived is handed over here, with the body bytes
        /// read so far, unless the whole body is there (`received` has reached
        /// the `Content-Length`, `expected`): then it waits for the transfer's
        /// end, and goes with the complete body, which needs no stream. Each
        /// handover to the waiting task costs a thread wake-up (the benchmark's
        /// `handoff` line): a token answer or a small API answer costs one,
        /// not three, and its reader waits for nothing more.
        private func progress(expected: curl_off_t, received: curl_off_t) -> Bool {
            if collectLimit == nil, headAccepted, !headDelivered, !(expected > 0 && received >= expected) {
                deliverHead()
            }
            return !isCancelled
        }

        /// Hands the head over with a body to stream: what was held first.
        /// Cancelled already, it makes no stream: nobody waits for the head,
        /// and the next chunk stops the transfer.
        private func deliverHead() {
            guard collectLimit == nil, headAccepted, !headDelivered else { return }
            headDelivered = true
            let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(
                bufferingPolicy: .bufferingOldest(Self.bufferedChunks))
            // The reader is gone: the transfer stops at its next callback
            // (the stream has ended; nothing more to end here).
            continuation.onTermination = { [weak self] _ in self?.markCancelled() }
            let made = lock.withLock { () -> Bool in
                guard !cancelled else { return false }
                self.continuation = continuation
                return true
            }
            guard made else {
                continuation.finish(throwing: CancellationError())
                return
            }
            if !held.isEmpty {
                // The stream's buffer has room for it: nothing reads it yet.
                _ = continuation.yield(held)
                held = Data()
            }
            resumeHead(with: HTTPResponseBody(stream, onCancel: { [self] in cancel() }))
        }

        private func resumeHead(with body: HTTPResponseBody) {
            guard
                let head = lock.withLock({ () -> CheckedContinuation<(HTTPResponse, HTTPResponseBody), any Error>? in
                    defer { headContinuation = nil }
                    return headContinuation
                })
            else { return }
            let response = HTTPResponse(status: .init(code: headReader.status), headerFields: headReader.fields)
            head.resume(returning: (response, body))
        }

        /// The end of the transfer. A head read whole and still held goes now
        /// with its complete body; one already handed over gets its stream
        /// ended (or failed); an error before any head goes to whoever waits.
        private func finish(_ error: (any Error)?) {
            if error == nil, headAccepted, !headDelivered {
                headDelivered = true
                resumeHead(with: HTTPResponseBody(held))
                held = Data()
            } else if headAccepted {
                // Streamed: the head goes, its stream fails (a collecting
                // caller, with no stream, gets the error instead of the head).
                deliverHead()
            }
            lock.withLock { continuation }?.finish(throwing: error)
            let head = lock.withLock { () -> CheckedContinuation<(HTTPResponse, HTTPResponseBody), any Error>? in
                defer { headContinuation = nil }
                return headContinuation
            }
            head?.resume(
                throwing: error
                    ?? AuthKitError.network(
                        url: display, reason: .init(.connectionClosed, "the connection closed before a response")))
        }
    }
#endif
