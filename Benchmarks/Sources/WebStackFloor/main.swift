// web-stack-floor: the web-signin and web-memory rows' floor. The example
// web app's HTTP work on the same stack (Hummingbird 2 serving, AsyncHTTPClient
// calling the provider on the default event loops, as AuthKitAsyncHTTPClient
// does) with none of AuthKit: the same routes, cookies, redirects, PKCE S256,
// code exchange and who-am-I call, sessions in a dictionary. It checks less
// than the example (no descriptor, no lock per account, no sealing, the
// answers barely read), so its rate is what this program reaches on the
// stack as it is configured here (AsyncHTTPClient's default pool of 8
// connections a host, Foundation linked): a reference for the part of the
// gap to Go that is the stack's, not a bound on any app.
//
//   web-stack-floor --port P --authorize-url URL --token-url URL --me-url URL
//
// Answers what Benchmarks/peers/webload asks: GET /auth/bench (302 to the
// provider, binding cookie), GET /auth/bench/callback (302 to / with the
// session cookie), GET / ("Signed in to bench" with a session).
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

@main
struct WebStackFloor {
    /// One sign-in under way, keyed by its binding cookie.
    struct Attempt {
        let state: String
        let verifier: String
    }

    struct Options {
        var port = 8080
        var authorizeURL = ""
        var tokenURL = ""
        var meURL = ""

        init(_ arguments: [String]) throws {
            var rest = arguments.dropFirst()
            while let name = rest.popFirst() {
                guard let value = rest.popFirst() else { throw Usage("\(name) needs a value") }
                switch name {
                case "--port": port = Int(value) ?? 0
                case "--authorize-url": authorizeURL = value
                case "--token-url": tokenURL = value
                case "--me-url": meURL = value
                default: throw Usage("unknown option \(name)")
                }
            }
            guard port > 0, !authorizeURL.isEmpty, !tokenURL.isEmpty, !meURL.isEmpty else {
                throw Usage("--port, --authorize-url, --token-url and --me-url are all needed")
            }
        }
    }

    struct Usage: Error, CustomStringConvertible {
        let description: String
        init(_ problem: String) {
            description =
                "web-stack-floor: \(problem)\nusage: web-stack-floor --port P --authorize-url URL --token-url URL --me-url URL"
        }
    }

    struct ProviderFailure: Error, CustomStringConvertible {
        let description: String
    }

    static let attempts = NIOLockedValueBox([String: Attempt]())
    static let sessions = NIOLockedValueBox([String: String]())
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: .init(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(30)),
            decompression: .disabled))

    static func main() async throws {
        let options: Options
        do {
            options = try Options(CommandLine.arguments)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)
        }
        let router = Router()
        router.get("/") { request, _ -> Response in
            if let id = request.cookies["authkit_session"]?.value,
                let user = sessions.withLockedValue({ $0[String(id)] })
            {
                return page("<p>Signed in to bench as \(user).</p>")
            }
            return page("<p><a href=\"/auth/bench\">Sign in with Benchmark</a></p>")
        }
        router.get("/auth/:provider") { _, _ -> Response in
            let attempt = Attempt(state: randomText(), verifier: randomText())
            let binding = randomText()
            attempts.withLockedValue { $0[binding] = attempt }
            let challenge = base64URL(Data(SHA256.hash(data: Data(attempt.verifier.utf8))))
            let location =
                "\(options.authorizeURL)?response_type=code&client_id=bench-client"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A\(options.port)%2Fauth%2Fbench%2Fcallback"
                + "&scope=read%20write&state=\(attempt.state)&code_challenge=\(challenge)&code_challenge_method=S256"
            return redirect(to: location, cookie: "authkit_signin=\(binding); Path=/auth; HttpOnly; SameSite=Lax")
        }
        router.get("/auth/:provider/callback") { request, _ -> Response in
            let query = request.uri.queryParameters
            guard let binding = request.cookies["authkit_signin"]?.value,
                let attempt = attempts.withLockedValue({ $0.removeValue(forKey: String(binding)) }),
                let state = query["state"], state == attempt.state, let code = query["code"]
            else { return Response(status: .badRequest) }
            let form =
                "grant_type=authorization_code&code=\(code)"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A\(options.port)%2Fauth%2Fbench%2Fcallback"
                + "&client_id=bench-client&client_secret=bench-secret&code_verifier=\(attempt.verifier)"
            let token = try await call(
                options.tokenURL, method: .POST, body: form,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"])
            guard let accessToken = token["access_token"] as? String else {
                throw ProviderFailure(description: "no access_token")
            }
            let me = try await call(
                options.meURL, method: .GET, body: nil,
                headers: ["Authorization": "Bearer \(accessToken)", "Accept": "application/json"])
            guard let subject = me["sub"] as? String else { throw ProviderFailure(description: "no sub") }
            let session = randomText()
            sessions.withLockedValue { $0[session] = subject }
            return redirect(to: "/", cookie: "authkit_session=\(session); Path=/; HttpOnly; SameSite=Lax")
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: options.port)))
        try await app.runService()
    }

    /// A provider call; its JSON answer as a dictionary.
    static func call(_ url: String, method: HTTPMethod, body: String?, headers: [String: String]) async throws
        -> [String: Any]
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok,
            let object = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
        else { throw ProviderFailure(description: "\(url) answered \(response.status)") }
        return object
    }

    static func randomText() -> String {
        base64URL(Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func page(_ body: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: "<!doctype html><html><body>\(body)</body></html>")))
    }

    static func redirect(to location: String, cookie: String) -> Response {
        Response(status: .found, headers: [.location: location, .setCookie: cookie])
    }
}
