import Foundation

// libFuzzer harness: the sandbox's request handling (AuthKitSandbox's
// Emulator), which reads whatever a browser or client on this machine sends.
// Input: a selector byte (descriptor and method), then `target\n` and
// `name: value` header lines up to an empty line, then the body.
@testable import AuthKit
@testable import AuthKitSandbox

private enum SandboxFixture {
    /// Decoded once; the catalogue itself is dropped (LeakSanitizer cannot
    /// follow the tagged pointers of the `Data` it would keep for the whole run).
    static let descriptors: [ProviderDescriptor] = {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        return ["qiita", "github", "google", "instagram", "twitter", "slack"].compactMap {
            try? catalog.descriptor(id: $0)
        }
    }()
    static let methods = ["GET", "POST", "DELETE", "PUT"]
    static let base = URL(string: "http://127.0.0.1:8790")!
}

func fuzzSandbox(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let selector = Int(bytes[0])
    let descriptor = SandboxFixture.descriptors[selector % SandboxFixture.descriptors.count]
    let method = SandboxFixture.methods[(selector / 8) % SandboxFixture.methods.count]
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let target = lines.isEmpty ? "/" : String(lines.removeFirst())
    var headers = [(name: String, value: String)]()
    while let line = lines.first, !line.isEmpty {
        lines.removeFirst()
        if let colon = line.firstIndex(of: ":") {
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
    }
    let body = Data(lines.dropFirst().joined(separator: "\n").utf8)
    let emulator = Emulator(
        descriptor: descriptor, address: SandboxAddress(base: SandboxFixture.base),
        options: SandboxOptions(approves: selector & 0x80 != 0 ? true : nil, deterministic: true), onEvent: nil)
    let request = SandboxRequest(
        method: method, target: target.hasPrefix("/") ? target : "/" + target,
        headers: headers, body: body, origin: SandboxFixture.base.absoluteString)
    // Twice: the second sees what the first left in the ledger (a used code, a consent).
    for _ in 0..<2 {
        let response = answer(request, by: emulator)
        precondition((200...599).contains(response.status), "status \(response.status)")
        // Nothing the sandbox issues travels in a Location it did not build from a registered redirect.
        if let location = response.headers.first(where: { $0.0 == "Location" })?.1 {
            precondition(
                isRegistered(location, descriptor.redirect.uri.absoluteString) || isLoopback(location),
                "redirect to an unregistered place: \(location)")
        }
    }
    return 0
}

/// The registered redirect URI itself, or it followed by its query or
/// fragment: a prefix alone let `…/callback.evil.example` pass.
private func isRegistered(_ location: String, _ registered: String) -> Bool {
    guard location.utf8.starts(with: registered.utf8) else { return false }
    let rest = location.utf8.dropFirst(registered.utf8.count)
    // `&` only after a registered URI that has a query of its own.
    let joins = registered.utf8.contains(UInt8(ascii: "?")) ? UInt8(ascii: "&") : UInt8(ascii: "?")
    return rest.first.map { [joins, UInt8(ascii: "?"), UInt8(ascii: "#")].contains($0) } ?? true
}

/// An http URL whose host is this machine's loopback address exactly (RFC
/// 8252 §7.3: any port): `http://127.0.0.1.evil.example` or
/// `http://127.0.0.1@evil.example` passed a prefix check.
private func isLoopback(_ location: String) -> Bool {
    guard let url = URLComponents(string: location) else { return false }
    return url.scheme == "http" && (url.host == "127.0.0.1" || url.host == "[::1]" || url.host == "::1")
        && url.user == nil && url.password == nil
}

/// Loads the catalogue before libFuzzer starts: a first use inside an input
/// would count it as that input's leak.
func prepareSandbox() {
    precondition(SandboxFixture.descriptors.count == 6, "the bundled descriptors the fixture names")
}

/// The emulation's answer: at once for a request without a signature to
/// check, as the server gives it; otherwise by its asynchronous path (jwt-kit
/// checks a DPoP proof or a client assertion), waited for here, on
/// libFuzzer's own thread, not one of Swift's cooperative threads.
private func answer(_ request: SandboxRequest, by emulator: Emulator) -> SandboxResponse {
    if let response = emulator.respondWithoutSignatures(request) { return response }
    final class Answer: @unchecked Sendable { var response: SandboxResponse? }
    let answer = Answer()
    let done = DispatchSemaphore(value: 0)
    Task {
        answer.response = await emulator.respond(request)
        done.signal()
    }
    done.wait()
    return answer.response!
}
