import AuthKit

/// What git hands its credential helper (git-credential(1), "INPUT/OUTPUT
/// FORMAT"): one `key=value` a line, up to a blank line or the end of input.
/// Read with bounds (a line, a count of lines): whatever runs the helper, it
/// cannot make it hold more.
struct GitCredentialRequest: Equatable {
    /// Each key's values in order (git repeats `wwwauth[]` and `capability[]`).
    var attributes: [String: [String]]

    static let longestLine = 8 << 10
    static let mostLines = 256

    init(lines: [String]) {
        var attributes = [String: [String]]()
        for line in lines {
            guard let equals = line.firstIndex(of: "=") else { continue }
            attributes[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        self.attributes = attributes
    }

    /// The request on standard input.
    /// - Throws: a ``CLIError`` naming the bound passed.
    static func read(_ fd: Int32 = 0) throws -> GitCredentialRequest {
        var lines = [String]()
        while true {
            switch FileSystem.readLine(fd, limit: longestLine) {
            case .end:
                return GitCredentialRequest(lines: lines)
            case .tooLong(let limit):
                throw CLIError(
                    "A line of git's request on standard input is longer than \(limit) bytes; git writes none such.",
                    status: .badInput)
            case .line(let line):
                if line.isEmpty { return GitCredentialRequest(lines: lines) }
                lines.append(line)
                guard lines.count <= mostLines else {
                    throw CLIError(
                        "git's request on standard input has more than \(mostLines) lines; git writes a handful.",
                        status: .badInput)
                }
            }
        }
    }

    /// `key`'s value when given exactly once (a request naming two hosts
    /// is not answered for either).
    func single(_ key: String) -> String? {
        guard let values = attributes[key], values.count == 1 else { return nil }
        return values[0]
    }
}
