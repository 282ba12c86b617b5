@_spi(Reproducible) import AuthKitOAuth1
import Foundation

/// OAuth 1.0a HMAC-SHA1 signing of X's documented example request
/// ("Creating a signature"): with its fixed nonce and timestamp, the
/// signature must be the published one; with a live nonce, every call draws
/// a fresh nonce and reads the clock, as a real client does.
struct SignBenchmark {
    let signer: OAuth1Signer
    let live: Bool
    let url = URL(string: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true")!
    let body = Data("status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21".utf8)

    init(live: Bool) {
        self.live = live
        signer = OAuth1Signer(
            consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            nonceAndTimestamp: live
                ? .live : .fixed(nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: "1318622958"))
    }

    func signOnce() throws -> String {
        try signer.authorizationHeader(
            method: "POST", url: url, contentType: "application/x-www-form-urlencoded", body: body,
            token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
            tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
    }

    func measure(seconds: Double) throws -> Measurement {
        let first = try signOnce()
        if !live, !first.contains(#"oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D""#) {
            throw BenchmarkFailure("wrong signature: \(first)")
        }
        if live, first == (try signOnce()) { throw BenchmarkFailure("a live nonce repeated itself") }
        var checksum = 0
        _ = try Measurement.loop(seconds: 0.2, batch: 1000) {
            for _ in 0..<1000 { checksum &+= try signOnce().utf8.count }
        }
        let result = try Measurement.loop(seconds: seconds, batch: 1000) {
            for _ in 0..<1000 { checksum &+= try signOnce().utf8.count }
        }
        if checksum == 0 { throw BenchmarkFailure("nothing signed") }
        return result
    }

    /// The live-nonce rate over the fixed-nonce rate, measured in one process
    /// by alternating batches of 1,000 signatures (the first of each pair
    /// alternating too), so a change in the machine's speed during the run
    /// weighs on both sides alike; separate runs minutes apart do not.
    static func liveOverFixed(seconds: Double) throws -> (ratio: Double, fixed: Measurement, live: Measurement) {
        let fixed = SignBenchmark(live: false)
        let live = SignBenchmark(live: true)
        _ = try fixed.measure(seconds: 0.1) // checks the published signature, warms up
        _ = try live.measure(seconds: 0.1)
        let clock = ContinuousClock()
        var spent = (fixed: Duration.zero, live: Duration.zero)
        var batches = 0
        var checksum = 0
        let deadline = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        repeat {
            for side in batches % 2 == 0 ? [fixed, live] : [live, fixed] {
                let start = clock.now
                for _ in 0..<1000 { checksum &+= try side.signOnce().utf8.count }
                let took = start.duration(to: clock.now)
                if side.live { spent.live += took } else { spent.fixed += took }
            }
            batches += 1
        } while clock.now < deadline
        if checksum == 0 { throw BenchmarkFailure("nothing signed") }
        let fixedRun = Measurement(ops: batches * 1000, seconds: spent.fixed.seconds)
        let liveRun = Measurement(ops: batches * 1000, seconds: spent.live.seconds)
        return (fixedRun.seconds / liveRun.seconds, fixedRun, liveRun)
    }
}
