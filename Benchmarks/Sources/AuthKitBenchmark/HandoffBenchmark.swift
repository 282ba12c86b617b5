import Foundation

/// What a blocking transfer costs in handoffs alone (row
/// tls-requests-sequential): a task hands a job to a thread waiting on a
/// condition, as `CurlWorkers` hands a transfer to its worker, and waits for
/// the thread to resume it, as a transfer's head and end resume the task.
/// One op is one such round trip; a request through the default transport
/// makes about one and a half (to the worker; back with the head; back
/// with the end of the body).
final class HandoffBenchmark: @unchecked Sendable {
    private let condition = NSCondition()
    private var job: (() -> Void)?

    init() {
        Thread.detachNewThread { [self] in
            while true {
                condition.lock()
                while job == nil { condition.wait() }
                let next = job!
                job = nil
                condition.unlock()
                next()
            }
        }
    }

    private func submit(_ next: @escaping () -> Void) {
        condition.lock()
        job = next
        condition.signal()
        condition.unlock()
    }

    func roundTrip() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in submit { done.resume() } }
    }

    func measure(seconds: Double) async -> Measurement {
        _ = await Measurement.loop(seconds: 0.2, batch: 100) { for _ in 0..<100 { await roundTrip() } }
        return await Measurement.loop(seconds: seconds, batch: 100) { for _ in 0..<100 { await roundTrip() } }
    }
}
