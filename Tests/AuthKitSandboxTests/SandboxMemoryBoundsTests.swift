import AuthKit
import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import AuthKitSandbox

/// What a long-running sandbox keeps is bounded in bytes, not only in
/// records: each value a client chooses and the sandbox keeps (a scope list,
/// `state`, `nonce`, an account name, a pushed request) is refused past its
/// bound before anything is kept, and the event log keeps the latest events
/// only. The 10,000-record limit held 10,000 one-megabyte scope lists.
@Suite struct SandboxMemoryBoundsTests {
    static let form = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]

    /// A provider that lists no known scopes (any scope is taken, so only the bound refuses a long one).
    static func open() throws -> ProviderDescriptor {
        try ProviderDescriptor(
            json: Data(
                """
                {"id": "open", "protocol": "oauth2",
                 "authorization": {"url": "https://as.open.example/authorize", "par": "https://as.open.example/par"},
                 "token": {"url": "https://as.open.example/token"},
                 "device": {"url": "https://as.open.example/device"}, "scopes": {"default": ["read"]}}
                """.utf8))
    }

    @Test func longValuesAreRefusedBeforeAnythingIsKept() async throws {
        let long = String(repeating: "s", count: 100_000)
        let basic = "Basic " + Data("sandbox-client:sandbox-secret".utf8).base64EncodedString()
        try await Sandbox.with(emulating: try Self.open()) { sandbox in
            let base = sandbox.baseURL.absoluteString + "/as.open.example"
            func post(_ path: String, _ body: [(String, String)], basicAuth: Bool = false) async throws -> (
                status: Int, body: String
            ) {
                var headers = Self.form
                if basicAuth { headers["Authorization"] = basic }
                let answer = try await raw(
                    "POST", try #require(URL(string: base + path)), headers: headers, body: FormURLEncoding.encode(body)
                )
                return (answer.status, answer.body)
            }
            let device = try await post("/device", [("client_id", "sandbox-client"), ("scope", long)], basicAuth: true)
            #expect(device.status == 400 && device.body.contains("invalid_scope"), "\(device.body.prefix(300))")
            let machine = try await post(
                "/token", [("grant_type", "client_credentials"), ("scope", long)], basicAuth: true)
            #expect(machine.status == 400 && machine.body.contains("invalid_scope"), "\(machine.body.prefix(300))")
            let pushed = try await post(
                "/par",
                [
                    ("response_type", "code"), ("state", long), ("code_challenge", String(repeating: "c", count: 43)),
                    ("code_challenge_method", "S256"),
                ], basicAuth: true)
            #expect(pushed.status == 400 && pushed.body.contains("bytes"), "\(pushed.body.prefix(300))")
            // Many short parameters, each within the byte bound, each costing its storage.
            let many = try await post(
                "/par",
                [("response_type", "code"), ("code_challenge", String(repeating: "c", count: 43))]
                    + (0..<1_000).map { ("p\($0)", "") }, basicAuth: true)
            #expect(many.status == 400 && many.body.contains("at most 64"), "\(many.body.prefix(300))")
            // A state over the bound is refused on a page, not echoed in a redirect.
            let state = String(repeating: "s", count: Emulator.maxValueBytes + 1)
            let authorize = try await raw(
                "GET",
                try #require(
                    URL(
                        string: base + "/authorize?response_type=code&client_id=sandbox-client&state=\(state)"
                            + "&code_challenge=\(String(repeating: "c", count: 43))&code_challenge_method=S256")))
            #expect(authorize.status == 400 && authorize.headers[.location] == nil, "\(authorize.status)")
            sandbox.emulator.withLedger { ledger in
                #expect(ledger.deviceCodes.isEmpty && ledger.pushedRequests.isEmpty && ledger.consents.isEmpty)
                #expect(ledger.grants.isEmpty && ledger.accessTokens.isEmpty)
            }
        }
    }

    /// A who-am-I path with an index far past any real answer's
    /// (`data[100000000]`) is the descriptor's mistake: the answer leaves it
    /// out, rather than make 100 million array elements to reach it.
    @Test func aWhoAmIPathsHugeIndexAllocatesNothing() async throws {
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "deep", "protocol": "oauth2",
                 "authorization": {"url": "https://as.deep.example/authorize"},
                 "token": {"url": "https://as.deep.example/token"}, "scopes": {"default": ["read"]},
                 "api": {"origins": ["https://api.deep.example"]},
                 "whoAmI": {"url": "https://api.deep.example/me", "subject": "data[100000000].id"}}
                """.utf8))
        try await Sandbox.with(emulating: descriptor, options: SandboxOptions(approves: true)) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            let me = try #require(URL(string: sandbox.baseURL.absoluteString + "/api.deep.example/me"))
            let answer = try await raw("GET", me, headers: ["Authorization": "Bearer \(credential.accessToken)"])
            #expect(
                answer.status == 200 && answer.body.utf8.count < 1000, "\(answer.status): \(answer.body.prefix(200))")
        }
    }

    /// The consent page's account name is kept with the grant and named in
    /// every `sub` (`sandbox-user-` and the name): one that would make it
    /// longer than OpenID Connect's 255 ASCII characters, or not ASCII, is
    /// refused, and no grant is made; the longest allowed signs in.
    @Test func aLongAccountNameIsRefused() async throws {
        try await Sandbox.with(emulating: try Self.open()) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            await #expect(throws: (any Error).self) {
                _ = try await client.authorize(
                    using: sandbox.userAgent(account: String(repeating: "a", count: Emulator.maxAccountBytes + 1)))
            }
            #expect(
                sandbox.events.last?.summary.contains("account name") == true, "\(sandbox.events.last?.summary ?? "")")
            sandbox.emulator.withLedger { #expect($0.grants.isEmpty && $0.codes.isEmpty) }
            #expect(!(try await client.authorize(using: sandbox.userAgent(account: "bob")).accessToken.isEmpty))
            await #expect(throws: (any Error).self) {
                _ = try await client.authorize(using: sandbox.userAgent(account: "アリス"))
            }
        }
        // The longest name makes a 255-character `sub` that AuthKit's verifier takes.
        let google = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "google")
        try await Sandbox.with(emulating: google) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let longest = String(repeating: "a", count: Emulator.maxAccountBytes)
            let credential = try await client.authorize(using: sandbox.userAgent(account: longest))
            #expect(credential.identity?.subject.utf8.count == 255)
        }
    }

    /// The event log keeps the latest `eventsKept` events, in order: it kept
    /// every one (some 650 bytes a request, for as long as the sandbox ran).
    @Test func theEventLogKeepsTheLatestEvents() async throws {
        try await Sandbox.with(emulating: try Self.open()) { sandbox in
            for index in 0..<(Emulator.eventsKept + 50) {
                sandbox.emulator.record(step: "test", request: "GET /\(index)", status: 200, summary: "event \(index)")
            }
            let events = sandbox.events
            #expect(events.count == Emulator.eventsKept)
            #expect(events.first?.summary == "event 50" && events.last?.summary == "event \(Emulator.eventsKept + 49)")
        }
    }
}
