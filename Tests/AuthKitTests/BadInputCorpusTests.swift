import Foundation
import Testing

@testable import AuthKit

/// Committed hostile and malformed inputs (Tests/AuthKitTests/Corpus), each
/// with the documented outcome: the typed error, and the field its message
/// names. None may crash, hang or be accepted by mistake.
@Suite struct BadInputCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    struct Expectation: Decodable {
        var field: String
        var contains: String
    }

    static var descriptorFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent("descriptors").path)) ?? [])
            .sorted()
    }

    @Test func corpusIsLargeEnough() throws {
        #expect(Self.descriptorFiles.count >= 30)
        #expect(try RedirectCorpus.load().cases.count >= 40)
        #expect(try TokenResponseCase.load().count >= 30)
    }

    @Test(arguments: descriptorFiles)
    func descriptorIsRejectedNamingTheField(file: String) throws {
        let expectations = try JSONDecoder().decode(
            [String: Expectation].self,
            from: Data(contentsOf: Self.corpus.appendingPathComponent("descriptors.expected.json")))
        let expected = try #require(expectations[file], "add \(file) to descriptors.expected.json")
        let url = Self.corpus.appendingPathComponent("descriptors/\(file)")
        do {
            _ = try DescriptorLoader().load(contentsOf: url)
            Issue.record("\(file) was accepted")
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason else { throw error }
            #expect(issues.allSatisfy { $0.file == url.path })
            let match = issues.first {
                $0.field == expected.field && (expected.contains.isEmpty || $0.problem.contains(expected.contains))
            }
            #expect(match != nil, "\(file): got \(issues.map(\.description))")
        }
    }

    struct RedirectCorpus: Decodable {
        struct Case: Decodable, Sendable, CustomTestStringConvertible {
            var url: String
            var expect: String
            var note: String
            var testDescription: String { note }
        }
        var state: String
        var redirectURI: String
        var issuer: String
        var cases: [Case]

        static func load() throws -> RedirectCorpus {
            try JSONDecoder().decode(
                RedirectCorpus.self,
                from: Data(contentsOf: BadInputCorpusTests.corpus.appendingPathComponent("redirects.json")))
        }
    }

    @Test(arguments: (try? RedirectCorpus.load().cases) ?? [])
    func redirectHasItsDocumentedOutcome(_ item: RedirectCorpus.Case) throws {
        let corpus = try RedirectCorpus.load()
        let pending = PendingAuthorization(
            providerID: "p", state: corpus.state, codeVerifier: nil, redirectURI: corpus.redirectURI,
            expectedIssuer: corpus.issuer, issuerRequired: false, scopes: [], createdAt: fixedNow)
        let outcome: String
        do {
            outcome = "code:" + (try RedirectParser().code(from: item.url, for: pending))
        } catch let error as AuthKitError {
            switch error.reason {
            case .redirect(let error):
                switch error {
                case .unexpectedTarget: outcome = "unexpectedTarget"
                case .malformed: outcome = "malformed"
                case .duplicateParameter(let name): outcome = "duplicateParameter:\(name)"
                case .missingState: outcome = "missingState"
                case .stateMismatch: outcome = "stateMismatch"
                case .issuerMismatch: outcome = "issuerMismatch"
                case .missingIssuer: outcome = "missingIssuer"
                case .missingCode: outcome = "missingCode"
                case .missingRequestToken, .requestTokenMismatch, .missingVerifier, .outOfBandAttempt,
                    .unusableVerifier:
                    outcome = "oauth1:\(error)"
                }
            case .authorizationFailed(let response): outcome = "authorizationFailed:\(response.code)"
            default: throw error
            }
        }
        #expect(outcome == item.expect, "\(item.note)")
    }

    struct TokenResponseCase: Decodable, Sendable, CustomTestStringConvertible {
        struct Repeat: Decodable, Sendable {
            var prefix: String
            var unit: String
            var count: Int
        }
        var note: String
        var status: Int
        var contentType: String
        var body: String?
        var `repeat`: Repeat?
        var expect: String
        var testDescription: String { note }

        static func load() throws -> [TokenResponseCase] {
            try JSONDecoder().decode(
                [TokenResponseCase].self,
                from: Data(contentsOf: BadInputCorpusTests.corpus.appendingPathComponent("token-responses.json")))
        }

        var response: IncomingResponse {
            var data = Data((body ?? "").utf8)
            if let spec = `repeat` {
                data = Data(spec.prefix.utf8)
                data.append(Data(repeating: spec.unit.utf8.first!, count: spec.count))
            }
            return IncomingResponse(
                status: status, headers: contentType.isEmpty ? [] : [("Content-Type", contentType)], body: data)
        }
    }

    @Test(arguments: (try? TokenResponseCase.load()) ?? [])
    func tokenResponseHasItsDocumentedOutcome(_ item: TokenResponseCase) throws {
        let outcome: String
        do {
            outcome = "ok:" + (try TokenResponseParser().parse(item.response).accessToken)
        } catch let error as AuthKitError {
            switch error.reason {
            case .providerError(_, let response): outcome = "providerError:\(response.code)"
            case .invalidResponse(_, let reason): outcome = "invalidResponse:\(reason)"
            default: throw error
            }
        }
        if item.expect.hasPrefix("invalidResponse:") {
            #expect(
                outcome.hasPrefix("invalidResponse:")
                    && outcome.contains(item.expect.dropFirst("invalidResponse:".count)),
                "\(item.note): \(outcome.prefix(200))")
        } else {
            #expect(outcome == item.expect, "\(item.note): \(outcome.prefix(200))")
        }
    }
}
