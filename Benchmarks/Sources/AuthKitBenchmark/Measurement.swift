import Foundation

/// Work done in a timed loop: the line every benchmark program prints.
struct Measurement {
    var ops: Int
    var seconds: Double
    /// The process's CPU time (user and system, every thread) over the
    /// timed loop, where it was measured (``loop(seconds:batch:_:)``): what
    /// the work cost the machine, beside what it took the clock. The peers'
    /// programs print the same (`cpu_seconds`).
    var cpuSeconds: Double?

    var json: String {
        guard let cpuSeconds else { return #"{"ops": \#(ops), "seconds": \#(seconds)}"# }
        return #"{"ops": \#(ops), "seconds": \#(seconds), "cpu_seconds": \#(cpuSeconds)}"#
    }

    /// User plus system time of the whole process so far (`getrusage`).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `-batches N`: every loop below (warm-up and timed) runs exactly N
    /// batches, whatever the time, so that events counted over a whole run
    /// (`perf stat` of a uprobe on `malloc` or `swift_retain`) divide into
    /// a count per operation: two runs' difference over their ops.
    static let fixedBatches = flag("batches").flatMap(Int.init)

    /// Runs `body` (which does `batch` operations) until `seconds` have
    /// passed (or ``fixedBatches`` are done).
    static func loop(seconds: Double, batch: Int, _ body: () throws -> Void) rethrows -> Measurement {
        let clock = ContinuousClock()
        let cpu = processCPUSeconds()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var ops = 0
        repeat {
            try body()
            ops += batch
        } while fixedBatches.map({ ops < $0 * batch }) ?? (clock.now < deadline)
        return Measurement(
            ops: ops, seconds: start.duration(to: clock.now).seconds, cpuSeconds: processCPUSeconds() - cpu)
    }

    static func loop(seconds: Double, batch: Int, _ body: () async throws -> Void) async rethrows -> Measurement {
        let clock = ContinuousClock()
        let cpu = processCPUSeconds()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var ops = 0
        repeat {
            try await body()
            ops += batch
        } while fixedBatches.map({ ops < $0 * batch }) ?? (clock.now < deadline)
        return Measurement(
            ops: ops, seconds: start.duration(to: clock.now).seconds, cpuSeconds: processCPUSeconds() - cpu)
    }

    /// `concurrency` tasks, each running `operation` one after another until
    /// `seconds` have passed after a 200 ms warm-up that is not counted.
    static func concurrently(
        seconds: Double, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Void
    ) async throws -> Measurement {
        let clock = ContinuousClock()
        // Counting (``fixedBatches``): each task does N batches of ten, no warm-up.
        if let batches = fixedBatches {
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask { for _ in 0..<batches * 10 { try await operation() } }
                }
                try await group.waitForAll()
            }
            return Measurement(ops: batches * 10 * concurrency, seconds: start.duration(to: clock.now).seconds)
        }
        let start = clock.now.advanced(by: .milliseconds(200))
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        let ops = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var done = 0
                    while clock.now < deadline {
                        try await operation()
                        if clock.now >= start { done += 1 }
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        return Measurement(ops: ops, seconds: start.duration(to: clock.now).seconds)
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
