/// An error of the command line itself, with its exit status.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus

    init(_ message: String, status: ExitStatus = .usage) {
        self.message = message
        self.status = status
    }

    var description: String { message }
}
