import AuthKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What git hands its credential helper (git-credential(1), "INPUT/OUTPUT
/// FORMAT"): one `key=value` a line, up to a blank line or the end of input.
/// Read with bounds (a line's size, a count of lines, the whole): whatever
/// runs the helper, it cannot make it hold more.
struct GitCredentialRequest: Equatable {
    /// Each key's values in order (git repeats `wwwauth[]` and `capability[]`).
    var attributes: [String: [String]]

    /// A line longer than this, or lines past ``mostLines``, are skipped
    /// (git passes on a server's `WWW-Authenticate` as `wwwauth[]` lines,
    /// whatever their size); more than ``mostBytes`` in all is refused.
    static let longestLine = 8 << 10
    static let mostLines = 256
    static let mostBytes = 1 << 20

    init(lines: [String]) {
        var attributes = [String: [String]]()
        for line in lines {
            guard let equals = line.firstIndex(of: "=") else { continue }
            attributes[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        self.attributes = attributes
    }

    /// The request on standard input.
    /// - Throws: a ``CLIError`` past ``mostBytes``.
    static func fromInput(_ fd: Int32 = 0) throws -> GitCredentialRequest {
        var lines = [String]()
        var total = 0
        let tooMuch = CLIError(
            "git's request on standard input holds more than \(mostBytes >> 20) MiB; git writes a few lines.",
            status: .badInput)
        while true {
            switch FileSystem.readLine(fd, limit: longestLine) {
            case .end:
                return GitCredentialRequest(lines: lines)
            case .tooLong(let limit):
                // The rest of the line is read and dropped, a byte at a time.
                total += limit
                var byte: UInt8 = 0
                while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
                    total += 1
                    guard total <= mostBytes else { throw tooMuch }
                }
            case .line(let line):
                if line.isEmpty { return GitCredentialRequest(lines: lines) }
                total += line.utf8.count + 1
                if lines.count < mostLines { lines.append(line) }
            }
            guard total <= mostBytes else { throw tooMuch }
        }
    }

    /// `key`'s value when given exactly once (a request naming two hosts
    /// is not answered for either).
    func single(_ key: String) -> String? {
        guard let values = attributes[key], values.count == 1 else { return nil }
        return values[0]
    }
}
