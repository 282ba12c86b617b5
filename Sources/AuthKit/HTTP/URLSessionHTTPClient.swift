// One file, two modules: compiled into AuthKit on Apple platforms and, on
// Linux, into AuthKitFoundationNetworking (Sources/AuthKitFoundationNetworking
// links to it), because there URLSession is in FoundationNetworking, which
// links libcurl: AuthKit itself does not import it on Linux, so a program on
// AuthKit (authkit among them) does not load libcurl before main().
#if (AUTHKIT_FOUNDATION_NETWORKING && canImport(FoundationNetworking)) || (!AUTHKIT_FOUNDATION_NETWORKING && !canImport(FoundationNetworking))
    #if AUTHKIT_FOUNDATION_NETWORKING
        import AuthKit
        import FoundationNetworking
    #endif
    import Foundation
    import HTTPTypes

    /// An ``HTTPClient`` on Foundation's `URLSession`: the default on Apple
    /// platforms, and on Linux (in `AuthKitFoundationNetworking`) a choice to
    /// make only for servers you trust, since FoundationNetworking cannot bound
    /// what it reads (docs/http.md, "Its limits on Linux").
    ///
    /// `timeout` is the longest silence allowed between bytes.
    public func urlSessionHTTPClient(timeout: TimeInterval = 30) -> any HTTPClient {
        URLSessionHTTPClient(timeout: timeout)
    }

    /// ``HTTPClient`` on Foundation's `URLSession` (libcurl on Linux).
    ///
    /// A data task with a delegate, so that, as ``HTTPClient`` requires, a
    /// redirect is never followed (`willPerformHTTPRedirection` answers `nil`, and
    /// the 3xx is returned) and the body is passed on chunk by chunk as it
    /// arrives. No cookies are kept and nothing is cached.
    ///
    /// It asks for `Accept-Encoding: identity` and refuses a body sent
    /// compressed anyway. On Linux that does not bound memory: FoundationNetworking
    /// tells libcurl to inflate whatever arrives, queues every inflated chunk for
    /// the delegate with no backpressure, and disregards the delegate's `.cancel`,
    /// so a gzip bomb (13 MB that inflate to 2 GiB) is held in memory before the
    /// refusal takes effect: measured, 2.2 GB and 20 s. For the same reason an
    /// endless body is queued as fast as the socket gives it, and the memory held
    /// depends on how soon the reader runs. Use it on Linux only with servers you
    /// trust; ``CurlHTTPClient``, the default there, makes libcurl wait for the
    /// reader and stops both at the size cap.
    /// `timeout` is the longest silence allowed between bytes; AuthKit adds a
    /// total deadline per request on top (see `RequestPolicy`).
    ///
    /// Reached through ``urlSessionHTTPClient(timeout:)`` (and, on Apple
    /// platforms, ``platformHTTPClient(timeout:)``): the concrete type is not API.
    package struct URLSessionHTTPClient: HTTPClient {
        /// Seconds without any bytes after which a request fails.
        package var timeout: TimeInterval
        private let owner: SessionOwner
        private var session: URLSession { owner.session }
        private var delegate: TaskDelegate { owner.delegate }

        /// One client of each default, shared as the Linux transport shares
        /// its workers: its connections are kept for the next request, and
        /// nothing is made per `OAuth2Client` or per web request.
        package static let shared = URLSessionHTTPClient()

        package init(timeout: TimeInterval = 30) {
            self.timeout = timeout
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            // No stored credential answers a server's challenge: AuthKit sets
            // `Authorization` itself (docs/http.md).
            configuration.urlCredentialStorage = nil
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let delegate = TaskDelegate()
            self.owner = SessionOwner(
                URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil), delegate: delegate)
        }

        package func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
            let display = request.url?.redactedForLogs ?? "(no URL)"
            guard let url = request.url else {
                throw AuthKitError.network(
                    url: display, reason: .init(.invalidRequest, "the request has no absolute URL"))
            }
            var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
            urlRequest.httpMethod = request.method.rawValue
            for field in request.headerFields.withoutFraming {
                urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
            }
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            urlRequest.httpBody = body
            let task = session.dataTask(with: urlRequest)
            let (stream, bodyContinuation) = AsyncThrowingStream<Data, any Error>.makeStream()
            // The reader stopped (cap reached, deadline passed, cancelled): stop the transfer.
            bodyContinuation.onTermination = { _ in task.cancel() }
            // A cancellation answers the caller itself, not through
            // URLSession's report of the cancelled task: FoundationNetworking
            // did not always report a task cancelled before it was resumed
            // (a task cancelled already when it called), and the caller
            // waited for ever (one run in several of the contract's
            // `cancelledTaskSendsNothing`, with every suite at once).
            let head: HTTPResponse = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { headContinuation in
                    delegate.register(
                        task.taskIdentifier,
                        TaskDelegate.Transfer(
                            display: display, timeout: timeout, head: headContinuation, body: bodyContinuation))
                    // Cancelled already (the handler below ran first, before
                    // this was registered): answered, and nothing is sent.
                    if Task.isCancelled {
                        delegate.cancel(task.taskIdentifier)
                        return
                    }
                    task.resume()
                }
            } onCancel: {
                task.cancel()
                delegate.cancel(task.taskIdentifier)
            }
            return (head, HTTPResponseBody(stream, onCancel: { task.cancel() }))
        }
    }

    /// Holds a client's session and invalidates it when the last copy of the
    /// client goes: a URLSession keeps its delegate "until your app exits or
    /// explicitly invalidates the session" (Apple's `URLSession.delegate`),
    /// so each client made and dropped leaked its session and connections.
    /// Transfers under way finish first (`finishTasksAndInvalidate`).
    private final class SessionOwner: Sendable {
        let session: URLSession
        let delegate: TaskDelegate
        init(_ session: URLSession, delegate: TaskDelegate) {
            self.session = session
            self.delegate = delegate
        }
        deinit { session.finishTasksAndInvalidate() }
    }

    /// Routes one session's delegate callbacks to the transfer each task belongs to.
    private final class TaskDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        /// The kind of failure a URLSession error stands for.
        static func kind(of error: any Error) -> AuthKitError.NetworkFailure.Kind {
            guard let error = error as? URLError else { return .connectionFailed }
            #if !canImport(Darwin)
                // FoundationNetworking (libcurl underneath) gives a TLS failure
                // no code of its own (`unknown`, -1), only libcurl's words,
                // which name it ("SSL certificate problem: …", "SSL connect
                // error"): read as "no connection", it was not said as what it was.
                if error.code == .unknown, error.localizedDescription.contains("SSL") { return .tlsFailure }
            #endif
            switch error.code {
            case .timedOut: return .timedOut
            case .networkConnectionLost: return .connectionClosed
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot,
                .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired:
                return .tlsFailure
            case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
                return .malformedAnswer
            default: return .connectionFailed
            }
        }

        struct Transfer {
            var display: String
            var timeout: TimeInterval
            var head: CheckedContinuation<HTTPResponse, any Error>?
            var body: AsyncThrowingStream<Data, any Error>.Continuation
        }

        private let lock = NSLock()
        private var transfers: [Int: Transfer] = [:]

        func register(_ id: Int, _ transfer: Transfer) {
            lock.withLock { transfers[id] = transfer }
        }

        /// The head continuation of `id`, taken so it is resumed once.
        private func takeHead(_ id: Int) -> CheckedContinuation<HTTPResponse, any Error>? {
            lock.withLock {
                let head = transfers[id]?.head
                transfers[id]?.head = nil
                return head
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil) // the 3xx itself is the response; AuthKit decides what follows
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            guard let http = response as? HTTPURLResponse else {
                refuse(dataTask, response, because: "the response was not HTTP", completionHandler)
                return
            }
            // An interim response (100 Continue, sent even unasked, or 103 Early
            // Hints) comes before the answer, and a client must read past it
            // (RFC 9110 §15.2). FoundationNetworking on Linux reports it to the
            // delegate like an answer, then the final head again.
            if (100...199).contains(http.statusCode), http.statusCode != 101 {
                completionHandler(.allow)
                return
            }
            var fields = HTTPFields()
            for (name, value) in http.allHeaderFields {
                if let name = HTTPField.Name(String(describing: name)) {
                    fields.append(HTTPField(name: name, value: String(describing: value)))
                }
            }
            if let problem = fields.framingProblem {
                refuse(dataTask, response, because: problem, completionHandler)
                return
            }
            // HTTPResponse.Status traps on a code outside 0...999; RFC 9112
            // §4's is three digits. (libcurl under FoundationNetworking reads
            // `HTTP/2 99999` on an HTTP/1.1 connection.)
            guard (100...999).contains(http.statusCode) else {
                refuse(
                    dataTask, response,
                    because: "its status code \(http.statusCode) is not three digits (RFC 9112 §4)",
                    completionHandler)
                return
            }
            if let encoding = fields[.contentEncoding]?.lowercased(), !["", "identity"].contains(encoding) {
                refuse(
                    dataTask, response,
                    because:
                        "the server sent a '\(DisplayText.sanitized(encoding, limit: 40))'-encoded body though none was asked for (Accept-Encoding: identity); it was refused",
                    completionHandler)
                return
            }
            takeHead(dataTask.taskIdentifier)?.resume(
                returning: HTTPResponse(status: .init(code: http.statusCode), headerFields: fields))
            completionHandler(.allow)
        }

        /// Refuses a head: its caller gets `reason` as a network error, and the
        /// transfer ends. FoundationNetworking on Linux disregards the `.cancel`
        /// disposition (it cannot pause libcurl there, so the transfer runs on
        /// while the delegate decides): without the explicit `cancel()` the task
        /// would run to its end. (It does not save the memory of a gzip bomb,
        /// which is inflated before the cancel is handled.)
        private func refuse(
            _ task: URLSessionDataTask, _ response: URLResponse, because reason: String,
            _ completionHandler: (URLSession.ResponseDisposition) -> Void
        ) {
            takeHead(task.taskIdentifier)?.resume(
                throwing: AuthKitError.network(
                    url: response.url?.redactedForLogs ?? "(no URL)", reason: .init(.malformedAnswer, reason)))
            completionHandler(.cancel)
            task.cancel()
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            _ = lock.withLock { transfers[dataTask.taskIdentifier]?.body }?.yield(data)
        }

        #if canImport(FoundationNetworking)
            /// An HTTP authentication challenge: a `401` with `WWW-Authenticate:
            /// Basic`, as a token endpoint answers `invalid_client` (RFC 6749 §5.2).
            /// AuthKit sets `Authorization` itself, so it is the answer, not a
            /// question for URLSession. FoundationNetworking raises it once the whole
            /// 401 has been handed over, in place of the task's completion, and with
            /// no credential to offer never completes the task
            /// (swift-corelibs-foundation#5456): the request hung until AuthKit's
            /// deadline. Here it ends the transfer as a completion would. (On Apple
            /// platforms the default handling finds no credential and the 401 comes
            /// back as the response.)
            func urlSession(
                _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
            ) {
                finish(task.taskIdentifier, error: nil)
                // the cancellation that follows finds the transfer gone
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        #else
            /// A challenge: the server's certificate is the system's to
            /// judge; any other (Basic, Digest, NTLM, Negotiate) is declined,
            /// so its 401 comes back as the answer. The default handling
            /// could answer `Negotiate` with the user's Kerberos ticket
            /// (macOS), a credential AuthKit never meant to send.
            func urlSession(
                _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
            ) {
                if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                    completionHandler(.performDefaultHandling, nil)
                } else {
                    completionHandler(.rejectProtectionSpace, nil)
                }
            }
        #endif

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            finish(task.taskIdentifier, error: error)
        }

        /// The caller's task was cancelled: its waiters are answered now (the
        /// head with `CancellationError`, the body ended so), whatever
        /// URLSession reports later of the task, which then finds it gone.
        func cancel(_ id: Int) {
            finish(id, error: URLError(.cancelled))
        }

        private func finish(_ id: Int, error: (any Error)?) {
            guard let transfer = lock.withLock({ transfers.removeValue(forKey: id) }) else { return }
            guard let error else {
                transfer.head?.resume(
                    throwing: AuthKitError.network(
                        url: transfer.display,
                        reason: .init(.connectionClosed, "the connection closed before a response")))
                transfer.body.finish()
                return
            }
            let failure: any Error
            if let error = error as? URLError, error.code == .cancelled {
                failure = CancellationError()
            } else if let error = error as? URLError, error.code == .timedOut {
                failure = AuthKitError.network(
                    url: transfer.display, reason: .init(.timedOut, "no data for \(Int(transfer.timeout)) s"))
            } else {
                failure = AuthKitError.network(
                    url: transfer.display, reason: .init(Self.kind(of: error), error.localizedDescription))
            }
            transfer.head?.resume(throwing: failure)
            transfer.body.finish(throwing: failure)
        }
    }
#endif
