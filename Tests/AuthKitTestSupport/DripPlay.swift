import AuthKit
import Foundation
import Logging

/// A token endpoint that drips one byte every 200 ms, played to a transport:
/// the silence timeout never trips, so only AuthKit's total deadline (2 s
/// here) ends the request. HostileServerTests plays it to the default
/// transport, AsyncHTTPClientTransportTests to AsyncHTTPClient.
public enum DripPlay {
    public struct Outcome: Sendable {
        /// What `FlowTransport.send` threw (`nil`: it returned an answer).
        public var error: (any Error)?
        public var elapsed: Duration

        /// Ended by the 2 s deadline, with the message that names it.
        public var endedAtTheDeadline: Bool {
            guard case AuthKitError.network(_, let reason)? = error else { return false }
            return reason.contains("within 2 s")
        }
    }

    public static func play(to http: any HTTPClient) async throws -> Outcome {
        try await withServer { server in
            server.route("POST", "/token") { _ in .streaming(.drip(), headers: [("Content-Type", "application/json")]) }
            let transport = FlowTransport(http: http, logger: Logger(label: "test"))
            let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
            let started = ContinuousClock.now
            do {
                _ = try await transport.send(request, step: .tokenExchange, policy: RequestPolicy(
                    redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(2)))
                return Outcome(error: nil, elapsed: ContinuousClock.now - started)
            } catch {
                return Outcome(error: error, elapsed: ContinuousClock.now - started)
            }
        }
    }
}
