// Signs Twitter's "Creating a signature" example request in a loop and prints
// signatures per second. Run through Benchmarks/run-signing-benchmark, which
// builds it in release mode and compares it with oauthlib's Client.sign.
//
// Usage: AuthKitSignBenchmark [seconds]     (default 3)
import AuthKitOAuth1
import Foundation

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 3
let url = URL(string: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true")!
let body = Data("status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21".utf8)
let signer = OAuth1Signer(
    consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    nonceAndTimestamp: .fixed(nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: "1318622958"))

func signOnce() throws -> String {
    try signer.authorizationHeader(
        method: "POST", url: url, contentType: "application/x-www-form-urlencoded", body: body,
        token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
        tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
}

// The benchmark is only meaningful if it computes the published signature.
let header = try signOnce()
guard header.contains(#"oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D""#) else {
    FileHandle.standardError.write(Data("wrong signature: \(header)\n".utf8))
    exit(1)
}

var count = 0
var checksum = 0
let clock = ContinuousClock()
let start = clock.now
let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
while clock.now < deadline {
    for _ in 0..<1000 {
        checksum &+= try signOnce().utf8.count
    }
    count += 1000
}
let elapsed = start.duration(to: clock.now)
let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(String(format: "%.0f", Double(count) / total))
FileHandle.standardError.write(Data("swift: \(count) signatures in \(String(format: "%.2f", total)) s (checksum \(checksum))\n".utf8))
