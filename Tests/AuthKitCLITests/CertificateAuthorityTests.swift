import AuthKitTestSupport
import Foundation
import Testing

/// The authorities the default transport trusts: the system's, or the ones
/// `SSL_CERT_FILE` names (OpenSSL's variable, which Go and `gh` honor too),
/// for a company's own authority. Run through `providers add --issuer`,
/// the one command that fetches an https URL with no credential.
@Suite struct CertificateAuthorityTests: CLIFixture {
    static let metadata = RawResponseServer.Script(
        head:
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 77\r\nConnection: close\r\n\r\n"
            + #"{"issuer":"https://elsewhere.example","authorization_endpoint":"x","token":1}"#)

    @Test func sslCertFileDecidesWhichAuthorityIsTrusted() async throws {
        let certificate = try await SelfSignedCertificate.make()
        let server = try RawResponseServer(Self.metadata, tls: certificate)
        try await server.start()
        defer { Task { await server.stop() } }
        let home = try home()
        let authority = home.appendingPathComponent("company-ca.pem")
        try Data(certificate.certificatePEM.utf8).write(to: authority)
        let command = ["providers", "add", "acme", "--issuer", server.baseURL]

        // The system's authorities do not know this one: a TLS failure, and
        // nothing of the request was sent.
        let untrusted = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
        #expect(untrusted.status == 4, "\(untrusted.status): \(untrusted.stderr)")
        #expect(untrusted.stderr.lowercased().contains("certificate"), "\(untrusted.stderr)")
        #expect(server.bytesReceived == 0, "\(server.bytesReceived) bytes reached a server nobody trusts")

        // Trusted through SSL_CERT_FILE: the answer was read (and refused
        // for what it says, RFC 8414 §3.3, not for the connection).
        let trusted = try await CLIProcess.run(
            command, environment: ["AUTHKIT_HOME": home.path, "SSL_CERT_FILE": authority.path])
        #expect(trusted.status != 4 && trusted.status != 0, "\(trusted.status): \(trusted.stderr)")
        #expect(trusted.stderr.contains("https://elsewhere.example"), "\(trusted.stderr)")
        #expect(server.bytesReceived > 0)

        // A file that is not there is named, with what to do.
        let missing = home.appendingPathComponent("no-such-ca.pem").path
        let broken = try await CLIProcess.run(
            command, environment: ["AUTHKIT_HOME": home.path, "SSL_CERT_FILE": missing])
        #expect(broken.status == 4, "\(broken.status): \(broken.stderr)")
        #expect(
            broken.stderr.contains("SSL_CERT_FILE names \(missing), which cannot be read")
                && broken.stderr.contains("unset it to trust the system's"), "\(broken.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/acme.json").path))
    }

    /// `SSL_CERT_DIR` is a list of directories separated by colons, as
    /// OpenSSL and Go read it: an authority in the second one is trusted,
    /// and a directory of the list that is not there is named. (The whole
    /// list was taken for one directory, and every https request refused.)
    @Test func sslCertDirIsAListOfDirectories() async throws {
        let certificate = try await SelfSignedCertificate.make()
        let server = try RawResponseServer(Self.metadata, tls: certificate)
        try await server.start()
        defer { Task { await server.stop() } }
        let home = try home()
        let empty = home.appendingPathComponent("ca-empty")
        let hashed = home.appendingPathComponent("ca-hashed")
        for directory in [empty, hashed] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let pem = hashed.appendingPathComponent("company.pem")
        try Data(certificate.certificatePEM.utf8).write(to: pem)
        // OpenSSL finds an authority in a directory by its subject's hash.
        let hash = try await ChildProcess.run("/usr/bin/openssl", ["x509", "-hash", "-noout", "-in", pem.path])
        try #require(hash.exit.status == 0, "\(hash.standardError)")
        try FileManager.default.copyItem(
            at: pem,
            to: hashed.appendingPathComponent(
                hash.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) + ".0"))
        let command = ["providers", "add", "acme", "--issuer", server.baseURL]

        let trusted = try await CLIProcess.run(
            command, environment: ["AUTHKIT_HOME": home.path, "SSL_CERT_DIR": "\(empty.path):\(hashed.path)"])
        #expect(trusted.status != 4 && trusted.status != 0, "\(trusted.status): \(trusted.stderr)")
        #expect(trusted.stderr.contains("https://elsewhere.example"), "\(trusted.stderr)")

        let missing = home.appendingPathComponent("no-such-dir").path
        let broken = try await CLIProcess.run(
            command, environment: ["AUTHKIT_HOME": home.path, "SSL_CERT_DIR": "\(hashed.path):\(missing)"])
        #expect(
            broken.status == 4 && broken.stderr.contains("SSL_CERT_DIR names \(missing), which cannot be read"),
            "\(broken.status): \(broken.stderr)")
    }

    /// Through an https proxy (`HTTPS_PROXY`), the answer is the server's,
    /// not the proxy's: a proxy that answers CONNECT with headers of its own
    /// (a `WWW-Authenticate` that would make a client refresh, say) does not
    /// get them read as the API's. Before, the proxy's "200 Connection
    /// established" and its headers were taken for the answer's head, and
    /// `--fail` passed on the server's 418.
    @Test func throughAProxyTheAnswerIsTheServers() async throws {
        let certificate = try await SelfSignedCertificate.make(host: "api.example.test")
        let server = try RawResponseServer(
            .init(
                head: "HTTP/1.1 418 I'm a teapot\r\nX-Real: yes\r\nContent-Length: 6\r\nConnection: close\r\n\r\nteapot"
            ),
            tls: certificate)
        try await server.start()
        defer { Task { await server.stop() } }
        let proxy = try ConnectProxy(
            tunnellingTo: server.port,
            answer:
                "HTTP/1.1 200 Connection established\r\nProxy-Agent: evilproxy\r\nWWW-Authenticate: Bearer error=\"invalid_token\"\r\n\r\n"
        )
        defer { proxy.stop() }
        let home = try home()
        let authority = home.appendingPathComponent("ca.pem")
        try Data(certificate.certificatePEM.utf8).write(to: authority)
        try Data(
            """
            {"id": "loc", "protocol": "oauth2", "authorization": {"url": "https://api.example.test/authorize"},
             "token": {"url": "https://api.example.test/token"}, "api": {"origins": ["https://api.example.test"]}}
            """.utf8
        ).write(to: home.appendingPathComponent("providers/loc.json"))
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "loc"], environment: ["AUTHKIT_HOME": home.path, "TOKEN": "tok-proxied"],
            launcher: CLIKeyringTests.importing(""))
        #expect(imported.status == 0, "\(imported.stderr)")
        let environment = [
            "AUTHKIT_HOME": home.path, "SSL_CERT_FILE": authority.path,
            "HTTPS_PROXY": "http://127.0.0.1:\(proxy.port)", "AUTHKIT_LOC_CLIENT_ID": "c",
        ]
        let answered = try await CLIProcess.run(
            ["request", "--provider", "loc", "-i", "--fail", "https://api.example.test/x"], environment: environment)
        #expect(proxy.tunnelCount == 1, "the request did not go through the proxy: \(answered.stderr)")
        #expect(answered.stdout.contains("418") && answered.stdout.contains("X-Real: yes"), "\(answered.stdout)")
        #expect(
            !answered.stdout.contains("evilproxy") && !answered.stdout.contains("invalid_token"), "\(answered.stdout)")
        #expect(answered.status != 0, "--fail passed a 418: \(answered.stderr)")
    }
}
