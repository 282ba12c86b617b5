import Foundation
import Logging

/// How both flow engines send a request: through the caller's ``HTTPClient``,
/// logged by step and display URL (never a query, a body or a header value).
package struct FlowTransport: Sendable {
    package let http: any HTTPClient
    package let logger: Logger

    package init(http: any HTTPClient, logger: Logger) {
        self.http = http
        self.logger = logger
    }

    package func send(_ request: OutgoingRequest, step: FlowStep) async throws -> IncomingResponse {
        logger.debug("\(step.rawValue): \(request.head.method.rawValue) \(request.displayURL)")
        let (head, body) = try await http.send(request.head, body: request.body)
        logger.debug("\(step.rawValue): HTTP \(head.status.code), \(body.count) bytes")
        return IncomingResponse(head, body: body)
    }
}
