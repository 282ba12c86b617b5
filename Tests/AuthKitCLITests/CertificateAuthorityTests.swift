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
}
