import AuthKitTestSupport
import Foundation
import Testing

/// `authkit authorize` with the device grant: asked for with --device, or
/// chosen because no browser can be opened here.
@Suite(.serialized) struct CLIDeviceTests {
    /// A provider `tv` with a device endpoint; the token is granted on the second poll.
    func setUp(_ server: TestHTTPServer) throws -> URL {
        server.route("POST", "/device") { _ in
            .json(#"{"device_code":"dev-code","user_code":"WDJB-MJHT","verification_uri":"\#(server.baseURL)/activate","expires_in":60,"interval":1}"#)
        }
        let polls = Recorder<Int>()
        server.route("POST", "/token") { _ in
            polls.append(1)
            return polls.all.count < 2 ? .json(#"{"error":"authorization_pending"}"#, status: 400)
                : .json(#"{"access_token":"tv-token","token_type":"Bearer","expires_in":3600}"#)
        }
        let home = try CLIProcess.home("authkit-device")
        let descriptor = #"{"id": "tv", "name": "TV", "protocol": "oauth2", "authorization": {"url": "\#(server.baseURL)/authorize"}, "token": {"url": "\#(server.baseURL)/token"}, "device": {"url": "\#(server.baseURL)/device"}}"#
        try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/tv.json"))
        return home
    }

    /// No $BROWSER, no $DISPLAY: the environment of an SSH session or a container.
    func headless(_ home: URL) -> [String: String] {
        ["AUTHKIT_HOME": home.path, "AUTHKIT_TV_CLIENT_ID": "tv-app", "SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"]
    }

    @Test func deviceSignsInWithTheCodeShown() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let result = try await CLIProcess.run(["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("Open \(server.baseURL)/activate and enter the code WDJB-MJHT to sign in to TV"), "\(result.stderr)")
            #expect(result.stdout.contains("Signed in to TV"))
            let list = try await CLIProcess.run(["token", "list", "--json"], environment: headless(home))
            #expect(list.stdout.contains(#""provider" : "tv""#), "\(list.stdout)")
        }
    }

    /// One command and no flags over SSH: the device grant is chosen, and said.
    @Test func noBrowserHereChoosesTheDeviceGrant() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let result = try await CLIProcess.run(["authorize", "--provider", "tv", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("No browser can be opened here (an SSH session without a display); signing in to TV with a device code instead (--device)"), "\(result.stderr)")
        }
    }

    /// A provider without the grant: told that --manual is the way, and how.
    @Test func noBrowserAndNoDeviceGrantPointsToManual() async throws {
        let home = TemporaryDirectory.url("authkit-device-none")
        let result = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c"],
                                        environment: ["AUTHKIT_HOME": home.path, "SSH_TTY": "/dev/pts/3"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("offers no device grant. Use --manual"), "\(result.stderr)")
        let asked = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--device"], environment: ["AUTHKIT_HOME": home.path])
        #expect(asked.status == 64 && asked.stderr.contains("no device authorization endpoint") && asked.stderr.contains("--manual"), "\(asked.stderr)")
    }

    @Test func ctrlCCancelsThePolling() async throws {
        try await withServer { server in
            let home = try setUp(server)
            server.route("POST", "/token") { _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
            let result = try await CLIProcess.run(["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home),
                                            interruptWhen: { $0.contains("enter the code") })
            #expect(result.status == 130, "\(result.stderr)")
        }
    }
}
