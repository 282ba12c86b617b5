import ArgumentParser
import AuthKit
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct Request: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send an authorized request with a stored credential and print the response body.",
        discussion: """
            An expired OAuth 2.0 token is refreshed (and saved) first. The body is
            streamed to standard output as it arrives. A response that is not 2xx
            prints its body and exits 3. On a terminal, control characters and
            escape sequences in it are shown as text (colours pass); a file or a
            pipe gets every byte.

            Redirects are not followed unless you pass -L. With -L the credential
            goes only to the URL's own origin: a redirect to another host is
            followed without it (and without a Cookie), and one from https to
            http is refused. Your other -H headers go along on every hop, as
            curl sends them: put no secret of your own in one with -L. A
            credential is sent over plain http only to loopback: 127.0.0.0/8, [::1], localhost.

            Examples:
              authkit request --provider qiita https://qiita.com/api/v2/authenticated_user
              authkit request --provider twitter -d 'status=Hello' \\
                https://api.x.com/1.1/statuses/update.json
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    /// As in curl: a body without `-X` is POSTed (a GET's body is ignored
    /// by most servers, so the data would be dropped without a word).
    @Option(
        name: [.customShort("X"), .long],
        help: ArgumentHelp(
            "The request method. Default: GET, or POST when a body is given (-d, --data-binary, --data-urlencode), as in curl.",
            valueName: "method"))
    var method: String?
    @Option(
        name: [.customShort("d"), .long],
        help: ArgumentHelp(
            "A request body, already form-encoded (a=1&b=x%20y); sent as application/x-www-form-urlencoded unless a Content-Type header is given. @FILE reads it from a file (@- from standard input) without its line breaks, as curl does. Repeatable: the parts are joined with &, as in curl.",
            valueName: "data"))
    var data: [String] = []
    @Option(
        name: .customLong("data-binary"),
        help: ArgumentHelp(
            "A request body sent byte for byte; @FILE reads it from a file (@- from standard input). Give its Content-Type with -H. Repeatable, joined with &.",
            valueName: "data"))
    var dataBinary: [String] = []
    @Option(
        name: .customLong("data-urlencode"),
        help: ArgumentHelp(
            "A form field whose value AuthKit encodes for you, as curl does: 'status=Hello + world!', "
                + "or name@FILE for a file's text (@- standard input); the name is sent as it is, already encoded "
                + "(repeatable).",
            valueName: "name=value"))
    var dataURLEncode: [String] = []
    @Option(
        name: [.customShort("H"), .long],
        help: ArgumentHelp("A request header, 'Name: value' (repeatable).", valueName: "header"))
    var header: [String] = []
    @Flag(
        name: [.customShort("L"), .long],
        help: "Follow redirects (at most 10), keeping the credential to the URL's origin.")
    var location = false
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Seconds the whole request may take, body included.", valueName: "seconds")) var timeout:
        Int = 60
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The largest response body to accept, in bytes; more ends the request.", valueName: "bytes"))
    var maxSize: Int = 100 << 20
    @Flag(name: [.customShort("i"), .long], help: "Print the status line and the response headers before the body.")
    var include = false
    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp(
            "Write the body to this file instead of standard output ('-': standard output).", valueName: "file"))
    var output: String?

    /// The file `-o` names; `-`, as in curl, is standard output (it wrote a file named `-`).
    var outputFile: String? { output == "-" ? nil : output }
    @Flag(
        name: [.customShort("f"), .long],
        help: "On an HTTP status of 400 or more, print no body; the exit status (3) and the error say what happened.")
    var fail = false
    @Flag(
        name: [.customShort("s"), .long],
        help: "No warnings or notes on standard error; errors, and --verbose's log when asked for, still show.")
    var silent = false
    @Argument(
        help:
            "The URL, or a path such as /user against the provider's API (the first origin its descriptor lists without * or {…})."
    )
    var url: String

    func validate() throws {
        if output?.isEmpty == true {
            throw ValidationError("-o needs a file name (or /dev/null to drop the body).")
        }
        // Before the workspace is made, which may already have a note to say.
        if silent { Console.quiet = true }
        try TimeoutOption.check(timeout)
        if maxSize <= 0 { throw ValidationError("--max-size takes a positive number of bytes.") }
        if let method, let problem = TypedMethod.problem(method) { throw ValidationError(problem) }
        // A HEAD request carries no body (libcurl sent none), and an OAuth
        // 1.0a signature covered form fields that were never sent.
        if method?.uppercased() == "HEAD", !(data + dataBinary + dataURLEncode).isEmpty {
            throw ValidationError(
                "-X HEAD sends no body; leave out -d, --data-binary and --data-urlencode, or use another method.")
        }
    }

    /// `-d` (from a file with `@`, its line breaks removed, as curl does),
    /// `--data-binary` (from a file, byte for byte) and each
    /// `--data-urlencode` field encoded, joined with `&`. Sent as a form
    /// (no Content-Type header), every part is checked to be one, since
    /// OAuth 1.0a signs its fields as they will be sent.
    func body() throws -> Data? {
        // The Content-Type that is sent: the last -H naming it, as each
        // replaces the one before (the first was read here, so a body was
        // signed as a form without being checked as one).
        let contentType = header.last { line in
            let name = line.prefix { $0 != ":" && $0 != ";" }
            return name.count < line.count && name.trimmingSpaces().lowercased() == "content-type"
        }
        let isForm = contentType.map { $0.lowercased().contains("x-www-form-urlencoded") } ?? true
        // Before anything is read: the first reader would take it all.
        let readers =
            (data + dataBinary).filter { $0 == "@-" }.count
            + dataURLEncode.filter { Self.fileField($0)?.path == "-" }.count
        if readers > 1 {
            throw CLIError(
                "Standard input can be read once: only one of -d, --data-binary and --data-urlencode may take @-.")
        }
        var parts = [Data]()
        // Repeated, each part is kept (the last alone was sent, the others
        // dropped without a word); joined with & in the order -d, then
        // --data-binary, then --data-urlencode.
        for (flag, value, keepsLineBreaks) in data.map({ ("-d", $0, false) })
            + dataBinary.map({ ("--data-binary", $0, true) })
        {
            let bytes = try Self.bytes(of: value, flag: flag, keepsLineBreaks: keepsLineBreaks)
            if isForm {
                guard let text = ValidUTF8.string(bytes) else {
                    throw CLIError(
                        "\(flag) is sent as application/x-www-form-urlencoded, but it is not text. Give its type with -H 'Content-Type: …'."
                    )
                }
                if let problem = Self.formProblem(text) {
                    // JSON (or any other body) given without its type: the
                    // type is the fix, not encoding it as a form.
                    let first = text.first { !$0.isWhitespace }
                    let fix =
                        first == "{" || first == "["
                        ? "It looks like JSON: give its type, -H 'Content-Type: application/json'."
                        : "Encode it (a space is %20 or +, a plus %2B), or use --data-urlencode 'name=value' and AuthKit encodes it; if it is not a form, give its type with -H 'Content-Type: …'."
                    throw CLIError("\(flag) is sent as application/x-www-form-urlencoded, but \(problem). \(fix)")
                }
                Self.notePlus(in: text, flag: flag)
            }
            parts.append(bytes)
        }
        for field in dataURLEncode {
            // curl's forms: name=value, or name@FILE (the file's text, line breaks kept), whichever sign comes first.
            if let (name, path) = Self.fileField(field) {
                let flag = "--data-urlencode \(DisplayText.sanitized(name, limit: 40))"
                guard let text = ValidUTF8.string(try Self.contents(of: path, flag: flag)) else {
                    throw CLIError(
                        "\(flag)@\(DisplayText.sanitized(path, limit: 200)): the file is not UTF-8 text, which a form field carries. Send bytes with --data-binary and a Content-Type."
                    )
                }
                parts.append(try Self.encodedField(name: name, value: text))
                continue
            }
            let pieces = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 2, !pieces[0].isEmpty else {
                let missing =
                    field.hasPrefix("@")
                    ? "no name before its '@'" : pieces.count == 2 ? "no name before its '='" : "no '=' or '@'"
                throw CLIError(
                    "--data-urlencode takes name=value or name@FILE; one has \(missing) (its value is not repeated here)."
                )
            }
            parts.append(try Self.encodedField(name: pieces[0], value: pieces[1]))
        }
        return Self.joined(parts)
    }

    /// One `--data-urlencode` field as curl sends it: the name as it is
    /// ("the name part is expected to be URL-encoded already", curl's
    /// manual), `=`, and the value encoded. The name was encoded too, so
    /// `a%5Bb%5D=x` went out as `a%255Bb%255D=x`. A name that is not
    /// form-encoded (a bad `%` escape) is refused as `-d` is, and so is a
    /// `&`, which would split the field in two; neither is repeated, as the
    /// field may hold a secret. A space, a control character or a byte past
    /// ASCII in the name (`café`), which cannot stand in a form, is encoded
    /// (curl sends it raw; refusing it broke names that worked before).
    static func encodedField(name: String, value: String) throws -> Data {
        let name = encodingWhatCannotStand(name)
        let problem =
            name.contains("&")
            ? "it contains '&', which would end the field there (%26 is an '&' in a name)"
            : formProblem(name)
        if let problem {
            throw CLIError(
                "--data-urlencode sends the name before its '=' (or '@') as it is, as curl does, but \(problem). "
                    + "Encode the name; only the value is encoded for you."
            )
        }
        notePlus(in: name, flag: "--data-urlencode's name")
        var field = Data(name.utf8)
        field.append(UInt8(ascii: "="))
        field.append(contentsOf: PercentEncoding.encode(value).utf8)
        return field
    }

    /// `text` with each byte that cannot stand in a form as it is (a space,
    /// a control character, a byte past ASCII) percent-encoded, and the
    /// rest, `%` escapes among it, left as it is.
    static func encodingWhatCannotStand(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes = [UInt8]()
        for byte in text.utf8 {
            if byte <= 0x20 || byte >= 0x7F {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Form parts joined with `&`, as curl joins its `-d`s; `nil` for none.
    static func joined(_ parts: [Data]) -> Data? {
        guard var body = parts.first else { return nil }
        for part in parts.dropFirst() {
            body.append(UInt8(ascii: "&"))
            body.append(part)
        }
        return body
    }

    /// The bytes `-d` or `--data-binary` gives: the value itself, or with
    /// `@`, a file's (`@-`: standard input's), whose line breaks `-d`
    /// removes, as curl does.
    static func bytes(of value: String, flag: String, keepsLineBreaks: Bool) throws -> Data {
        guard value.hasPrefix("@") else { return Data(value.utf8) }
        var bytes = try contents(of: String(value.dropFirst()), flag: flag + " ")
        if !keepsLineBreaks { bytes.removeAll { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") } }
        return bytes
    }

    /// Every `-d` of `token header` and `sign`, joined with `&` as curl
    /// joins them (the last alone was signed); `nil` for none.
    static func signedForm(_ values: [String]) throws -> Data? {
        if values.filter({ $0 == "@-" }).count > 1 {
            throw CLIError("Standard input can be read once: only one -d may take @-.")
        }
        return joined(try values.map(signedForm))
    }

    /// `-d` as `sign` and `token header` sign it (RFC 5849 §3.4.1.3.1): read
    /// as `request` reads it, `@FILE` included, so the signature covers the
    /// body curl (or `request`) will send for the same `-d`, and checked to be
    /// a form exactly as it will be sent.
    static func signedForm(_ value: String) throws -> Data {
        let bytes = try Self.bytes(of: value, flag: "-d", keepsLineBreaks: false)
        guard let text = ValidUTF8.string(bytes) else {
            throw CLIError(
                "-d is signed as application/x-www-form-urlencoded, but it is not text. A body of other bytes is not signed (RFC 5849 §3.4.1.3.1): leave out -d."
            )
        }
        // A JSON body is no form: OAuth 1.0a signs none of it (RFC 5849
        // §3.4.1.3.1), so the advice to encode it was wrong, and one without
        // a space (`{"a":1}`) was signed as a form field named after it,
        // which a server reading it as JSON leaves out of the signature.
        if let first = text.first(where: { !$0.isWhitespace }), first == "{" || first == "[" {
            throw CLIError(
                "-d looks like JSON, and OAuth 1.0a signs only a form body's parameters (RFC 5849 §3.4.1.3.1), "
                    + "never a JSON body: leave out -d (the signature covers the method and URL), and send the JSON "
                    + "with its own Content-Type.")
        }
        if let problem = formProblem(text) {
            throw CLIError(
                "-d is signed as application/x-www-form-urlencoded, but \(problem). "
                    + "Encode it (a space is %20 or +, a plus %2B) exactly as it will be sent.")
        }
        notePlus(in: text, flag: "-d")
        return bytes
    }

    /// `name@FILE` of `--data-urlencode` (an `@` before any `=`, after a
    /// name): the name and the path (`-`: standard input); nil for `name=value`.
    static func fileField(_ field: String) -> (name: String, path: String)? {
        guard let at = field.firstIndex(of: "@"), field[..<at].firstIndex(of: "=") == nil, at > field.startIndex else {
            return nil
        }
        return (String(field[..<at]), String(field[field.index(after: at)...]))
    }

    /// Header fields every request carries, which `-H 'Name:'` cannot remove.
    static let headersAlwaysSent: Set<String> = ["user-agent", "accept", "accept-encoding"]

    /// Header fields `-H` cannot set, and why. Each was dropped or obeyed to
    /// the request's harm: the credential's `Authorization` silently replaced
    /// the one given; a `Content-Length` that disagreed with the body left the
    /// server waiting for bytes that never came (RFC 9110 §8.6), and a
    /// `Transfer-Encoding` would frame the body as it is not (RFC 9112 §6.1);
    /// a `Host` of one's own was kept on redirects to other hosts.
    static let headersNotTaken = [
        "authorization":
            "the stored credential's Authorization header is sent; a request with one of your own is a job for curl.",
        "content-length": "the length is that of the body given with -d or --data-binary, and is set from it.",
        "transfer-encoding": "the body is sent whole, with its length; it cannot be framed otherwise.",
        // Kept on every hop of -L, it named the first host to the others.
        "host": "the Host is the URL's, which is also the origin the credential goes to; give the URL with that host.",
    ]

    /// The most `-d @FILE` (or `@-`) reads: a body is held in memory before it is sent.
    static let maximumBodyFileSize = 256 << 20

    /// The bytes of `path`, or of standard input for `-`: what `@path` after
    /// `flag` names (`-d `, or `--data-urlencode status`, whose `@` follows
    /// the name). Errors quote it as typed.
    private static func contents(of path: String, flag: String) throws -> Data {
        let written = "\(flag)@\(DisplayText.sanitized(path, limit: 200))"
        if path == "-" {
            do {
                return try FileSystem.readToEnd(STDIN_FILENO, limit: Self.maximumBodyFileSize)
            } catch let failure as FileSystem.ReadFailure {
                throw CLIError("\(written): standard input \(failure.description)")
            } catch {
                throw CLIError("\(written): standard input cannot be read (\(DescriptorLoader.reason(error))).")
            }
        }
        guard !path.isEmpty else {
            throw CLIError("\(written) needs a file name after the '@' (or - for standard input).")
        }
        do {
            // A pipe too: `-d @<(jq …)`, as curl reads it.
            return try FileSystem.contents(of: path, accepting: .fileOrPipe, limit: Self.maximumBodyFileSize)
        } catch {
            throw CLIError("\(written): the file \(error.description)")
        }
    }

    /// A `+` in a form body is a space (the form encoding's own rule, which
    /// RFC 5849 §3.4.1.3.1 follows when it signs the body, and which every
    /// form encoder writes: Python's `urlencode`, Go's `url.Values`, HTML
    /// forms): the body is signed and sent so. Only said, on standard error,
    /// for whoever meant a literal plus.
    static func notePlus(in text: String, flag: String) {
        guard text.contains("+") else { return }
        Console.err(
            "authkit: note: a '+' in \(flag) is a space in a form body, and is sent and signed as one; write %2B for a plus sign."
        )
    }

    /// Why `text` is not form-encoded as a server will read it, or nil.
    static func formProblem(_ text: String) -> String? {
        if let bad = text.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value >= 0x7F }) {
            return bad == " "
                ? "it contains a space" : "it contains '\(DisplayText.sanitized(String(bad)))', which must be %-encoded"
        }
        if let bad = TypedURL.badEscape(in: text) {
            return "it has '\(DisplayText.sanitized(bad, limit: 3))', a '%' that is not followed by two hex digits"
        }
        // `FormURLEncoding.decode` refuses these too: a form carries UTF-8
        // text (RFC 5849 §3.6 signs it so), and servers read other bytes
        // differently (the byte, or U+FFFD).
        if let escape = PercentEncoding.escapeNotUTF8(in: text) {
            return
                "it has '\(DisplayText.sanitized(escape, limit: 12))', which is not UTF-8 once decoded (a form carries UTF-8 text; é is %C3%A9)"
        }
        if FormURLEncoding.decode(text) == nil { return "it is not form-encoded" }
        return nil
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        let target = try TypedURL.url(try absolute(url, in: workspace))
        try workspace.checkSandboxOrigin(target)
        // Plain http to another machine is refused as such when it is sent
        // (insecureTransport), whatever the descriptor lists.
        if target.allowsCredentials {
            try workspace.checkAPIOrigin(target, providerID: account.provider, explicit: client.settings())
        }
        let (request, method) = try outgoing(to: target)
        // RFC 5849 §3.5: the header carries the protocol parameters; one in
        // the URL or the form body too would be sent (and signed) twice.
        // §3.6: the query is signed as UTF-8 text.
        if (try? workspace.descriptor(account.provider))?.protocol == .oauth1 {
            try Sign.checkSignable(
                target.absoluteString,
                // A form body as the signer reads one (RFC 5849 §3.4.1.3.1).
                body: FormURLEncoding.isFormContentType(request.head.headerFields[.contentType])
                    ? request.body : nil, withToken: true)
        }
        let policy = RequestPolicy(
            redirects: location ? .follow(maximum: 10) : .deliver, maximumBodySize: maxSize,
            deadline: .seconds(timeout))
        let source = try await workspace.source(key, explicit: client.settings())
        // What a refresh may replace: the secrets this command could send,
        // which an API's error must not repeat on standard error.
        let sent = try? await workspace.store.credential(for: key)
        let (head, response, answering, credentialed) = try await source.send(request, policy: policy)
        let status = head.status.code
        var headBytes = Data()
        if include {
            let phrase = head.status.reasonPhrase.isEmpty ? "" : " " + head.status.reasonPhrase
            var lines = "HTTP/1.1 \(status)\(phrase)\r\n"
            for field in head.headerFields { lines += "\(field.name): \(field.value)\r\n" }
            headBytes = Data((lines + "\r\n").utf8)
        }
        if include, outputFile == nil {
            // A header value is the server's too: on a terminal, its controls
            // (a C1 CSI or OSC, which swift-http-types keeps) are written out
            // as the body's are; a pipe gets it unchanged.
            if isatty(STDOUT_FILENO) != 0 {
                var filter = TerminalFilter()
                _ = Console.write(filter.filter(headBytes) + filter.finish(), to: STDOUT_FILENO)
            } else {
                _ = Console.write(headBytes, to: STDOUT_FILENO)
            }
        }
        if fail, status >= 400 {
            response.cancel()
        } else {
            do {
                if let output = outputFile {
                    // With -i, the head goes where the body goes, as curl's -i -o does.
                    try await Self.save(response, to: output, after: headBytes)
                } else {
                    try await Self.write(response, to: STDOUT_FILENO)
                }
            } catch let binary as BinaryOnATerminal {
                // A refusal's binary body, not written to the terminal: its
                // status (exit 3, "answered HTTP 404") says what happened;
                // "the response is binary" (exit 1) hid it.
                guard !(200...299).contains(status) else { throw binary.refusal }
                response.cancel()
            }
        }
        guard (200...299).contains(status) else {
            throw await refusal(
                status: status, head: head, answering: answering, credentialed: credentialed, target: target,
                method: method, source: source, sent: sent, in: workspace)
        }
    }

    /// `path` against the provider's API, as `gh api /user` takes it: the
    /// first origin its descriptor lists (the sandbox's, with `--sandbox`);
    /// an absolute URL as it is.
    private func absolute(_ path: String, in workspace: Workspace) throws -> String {
        guard path.hasPrefix("/"), !path.hasPrefix("//") else { return path }
        if let sandbox = workspace.sandbox {
            let base = sandbox.absoluteString
            return (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
        }
        let descriptor = try workspace.descriptor(account.provider)
        guard let origin = descriptor.apiOrigins.patterns.first(where: { !$0.contains("{") && !$0.contains("*") })
        else {
            // The path without its query: one holds an API key as often as not.
            let shown = DisplayText.sanitized(
                String(path.prefix { $0 != "?" && $0 != "#" })
                    + (path.contains(where: { $0 == "?" || $0 == "#" }) ? "?…" : ""),
                limit: 80)
            throw CLIError(
                "\(shown) is a path, and \(descriptor.name)'s descriptor (\(descriptor.source)) lists no API origin without a wildcard or placeholder to put it on (api.origins): give the whole URL.",
                status: .usage)
        }
        return origin + path
    }

    /// Writes the body to `path` (created, or replaced) as it arrives.
    /// A regular file (or a new one) is replaced only once the whole body
    /// has arrived: the body goes to a file beside it, which is then renamed
    /// over it, so a transfer that fails part-way (a timeout, `--max-size`,
    /// a dropped connection, a full disk) leaves what was there; it was
    /// truncated first. Anything else (a device such as /dev/null, a pipe,
    /// a symbolic link), or a file in a directory where no file can be made,
    /// is written to directly, as curl does.
    private static func save(_ response: HTTPResponseBody, to path: String, after head: Data) async throws {
        var info = stat()
        let exists = lstat(path, &info) == 0
        // A file curl could not write (another user's, or read-only) is not
        // replaced through its directory either: renamed over, it became
        // this user's with the body in it, where curl -o fails. Written to
        // directly instead, so the system says no as it does to curl.
        let writable = !exists || (info.st_uid == geteuid() && access(path, W_OK) == 0)
        if !exists || (info.st_mode & S_IFMT == S_IFREG && writable) {
            let slash = path.lastIndex(of: "/")
            let directory = slash.map { String(path[...$0]) } ?? ""
            let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            let partial = "\(directory).\(name).authkit-\(SecureRandom.token().prefix(12))"
            // The mode it had (else the usual 0644, less the umask), without
            // set-user-ID, set-group-ID and sticky bits: curl's write clears
            // the first two (the kernel does, for a non-root writer), and a
            // download kept a program's setuid bit.
            let mode = exists ? info.st_mode & 0o777 : 0o644
            // Ctrl-C or SIGTERM mid-transfer ends the process past the
            // `defer` below: the partial copy, up to --max-size, is removed
            // then too. Named before it exists, so no signal finds it unnamed.
            Interrupt.removeOnSignal(partial)
            let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd < 0 { Interrupt.keep(partial) }
            if fd >= 0 {
                var renamed = false
                defer {
                    close(fd)
                    if !renamed { unlink(partial) }
                    Interrupt.keep(partial)
                }
                if exists { _ = fchmod(fd, mode) } // exactly the old mode, whatever the umask
                try await write(response, to: fd, path: path, after: head)
                guard FileSystem.flushToDisk(fd) else {
                    throw CLIError("-o \(path): the body could not be written in full.", status: .outputFailed)
                }
                guard rename(partial, path) == 0 else {
                    throw CLIError(
                        "-o \(path): cannot be replaced (\(String(cString: strerror(errno)))); it was left as it was.",
                        status: .outputFailed)
                }
                renamed = true
                return
            }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            response.cancel()
            throw CLIError(
                "-o \(path): cannot be written (\(String(cString: strerror(errno)))).", status: .outputFailed)
        }
        defer { close(fd) }
        if isatty(fd) != 0 {
            // A terminal named as the file (`-o /dev/tty`, `-o /dev/stdout`
            // at a terminal) is written as standard output on one is: the
            // server's escape sequences written out, binary refused. They
            // reached the terminal raw (an OSC 52 sequence set the clipboard).
            var filter = TerminalFilter()
            if !head.isEmpty { _ = Console.write(filter.filter(head) + filter.finish(), to: fd) }
            try await Self.write(response, to: fd)
            return
        }
        try await write(response, to: fd, path: path, after: head)
    }

    /// The body to the file `fd` is open on, named `path` in an error;
    /// `head` (the status line and headers of `-i`) first.
    private static func write(_ response: HTTPResponseBody, to fd: Int32, path: String, after head: Data) async throws {
        guard head.isEmpty || Console.write(head, to: fd) else {
            response.cancel()
            throw CLIError("-o \(path): the body could not be written in full.", status: .outputFailed)
        }
        for try await chunk in response {
            guard Console.write(chunk, to: fd) else {
                throw CLIError("-o \(path): the body could not be written in full.", status: .outputFailed)
            }
        }
    }

    /// The request `-X`, `-d` and `-H` describe, to `target`, and its method.
    private func outgoing(to target: URL) throws -> (request: OutgoingRequest, method: String) {
        let body = try body()
        let method = method?.uppercased() ?? (body == nil ? "GET" : "POST")
        var request = OutgoingRequest(method: HTTPRequest.Method(method) ?? .get, url: target)
        // As in curl: 'Name;' sends the header with an empty value, and
        // 'Name:' with nothing after it sends none of that name, not even one
        // authkit would add (-H 'Content-Type:' sends -d's body without one).
        var dropped = Set<String>()
        // Names an earlier -H of this command gave: a second -H of the same
        // name adds a value, as curl sends both (it replaced the first
        // silently), but for the headers there is one of (below).
        var given = Set<String>()
        for line in header {
            let parts: [String]
            if let colon = line.firstIndex(of: ":") {
                parts = [
                    String(line[..<colon]).trimmingSpaces(), String(line[line.index(after: colon)...]).trimmingSpaces(),
                ]
            } else if line.hasSuffix(";") {
                parts = [String(line.dropLast()).trimmingSpaces(), ""]
            } else {
                // The line is not repeated: a header's value is often a secret
                // (an API key), and errors end up in logs.
                throw CLIError(
                    "-H takes 'Name: value' ('Name;' for an empty value); one -H has no ':' after its name (it is not repeated here)."
                )
            }
            guard HTTPField.Name(parts[0]) != nil else {
                throw CLIError(
                    "-H takes 'Name: value'; '\(DisplayText.sanitized(String(parts[0].prefix(40))))' is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)."
                )
            }
            // swift-http-types would turn a CR, LF or NUL into a space: a
            // value changed silently (a key that then fails), or, sent raw by
            // another client, a second header smuggled in.
            guard HTTPField.isValidValue(parts[1]) else {
                throw CLIError(
                    "-H '\(DisplayText.sanitized(String(parts[0].prefix(40))))': the value holds a line break or another control character, which a header cannot carry (it is not repeated here)."
                )
            }
            if let reason = Self.headersNotTaken[parts[0].lowercased()] {
                throw CLIError("-H '\(DisplayText.sanitized(String(parts[0].prefix(40))))': \(reason) Remove it.")
            }
            if parts[1].isEmpty, !line.hasSuffix(";") {
                // Every request carries these (the transport adds them): -H
                // sets another value, and a removal that was not done was
                // said done by the docs.
                if Self.headersAlwaysSent.contains(parts[0].lowercased()) {
                    throw CLIError(
                        "-H '\(parts[0]):': authkit always sends \(parts[0]); give it a value to send another (-H '\(parts[0]): …').",
                        status: .usage)
                }
                dropped.insert(parts[0].lowercased())
                given.remove(parts[0].lowercased())
                request.removeHeader(parts[0])
            } else {
                let name = parts[0].lowercased()
                dropped.remove(name)
                if given.contains(name), !Self.headersAlwaysSent.contains(name), name != "content-type",
                    let field = HTTPField.Name(parts[0])
                {
                    request.head.headerFields.append(HTTPField(name: field, value: parts[1]))
                } else {
                    request.setHeader(parts[0], parts[1])
                }
                given.insert(name)
            }
        }
        if let body {
            request.body = body
            if request.header("Content-Type") == nil, !dropped.contains("content-type") {
                request.setHeader("Content-Type", "application/x-www-form-urlencoded")
            }
        }
        return (request, method)
    }

    /// A body holding NUL bytes, not written to a terminal (``write(_:to:)``).
    struct BinaryOnATerminal: Error {
        let refusal = CLIError(
            "The response is binary (it holds NUL bytes), so it was not written to the terminal, which it could garble. "
                + "Redirect it to a file (> file), or pipe it (| cat) to see it anyway.", status: .failure)
    }

    /// Writes the answer's body to `fd`, as curl does: every byte to a file or
    /// a pipe; to a terminal, text with its control characters and escape
    /// sequences written out (colours aside), and never binary.
    private static func write(_ response: HTTPResponseBody, to fd: Int32) async throws {
        // As curl does: binary output is not written to a terminal, which it
        // could garble (or drive: a body is the server's bytes, not text
        // AuthKit escaped). A file or a pipe gets every byte.
        // Text shown on a terminal has its control characters and escape
        // sequences written out, colours aside (TerminalFilter).
        let toTerminal = isatty(fd) != 0
        var filter = TerminalFilter()
        var last: UInt8?
        for try await chunk in response {
            last = chunk.last ?? last
            if toTerminal, chunk.contains(0) { throw BinaryOnATerminal() }
            if !Console.write(toTerminal ? filter.filter(chunk) : chunk, to: fd) { break } // the reader has gone
        }
        if toTerminal {
            // A body without a final line break would leave the shell's
            // prompt, or the error below, on its last line. Only on a
            // terminal: a file or a pipe gets the server's bytes unchanged.
            _ = Console.write(
                filter.finish() + (last.map { $0 == UInt8(ascii: "\n") } == false ? Data("\n".utf8) : Data()), to: fd)
        }
    }

    /// The error for an answer that is not a success, with what the
    /// credential and its refresh have to do with it.
    private func refusal(
        status: Int, head: HTTPResponse, answering: URL, credentialed: Bool, target: URL, method: String,
        source: CredentialSource, sent: Credential?, in workspace: Workspace
    ) async -> CLIError {
        let hint = (300...399).contains(status) && !location ? " (a redirect; -L follows it)" : ""
        // Why the refresh CredentialSource tries for an invalid_token did
        // not help. A credential that could be refreshed but for a client
        // setting missing here: the setting is what to give, not a new
        // sign-in (which needs it too, and throws away a refresh token
        // that works).
        let stored = try? await workspace.store.credential(for: source.key)
        let refreshable =
            stored.map {
                // A client credentials grant renews itself too (asked for again).
                $0.kind == .oauth2 && ($0.isRenewable || source.authenticator.descriptor.refresh != nil)
            } ?? false
        let refresh: RefreshOutcome
        if let clientless = source.authenticator as? ClientlessAuthenticator, refreshable {
            refresh = .blocked(ErrorReport.message(for: clientless.missing, environment: workspace.environment))
        } else if let sent, let stored, sent.accessToken != stored.accessToken {
            // Renewed by this command's refresh, or by another process
            // meanwhile (whose renewal the refresh then took up): either
            // way the token sent last was a new one.
            refresh = .renewedAndRefused
        } else {
            refresh = refreshable ? .failed : .impossible
        }
        // A challenge from another origin (after -L) is not about the
        // credential, which was not sent there: no advice to sign in
        // again, nor to grant the scopes a third party names.
        let fromCredentialed = credentialed
        let mask = SecretMask(
            [sent, stored].compactMap { $0 }.flatMap { [$0.accessToken, $0.refreshToken, $0.tokenSecret] }.compactMap {
                $0
            }
                + [source.authenticator.settings.clientSecret].compactMap { $0 })
        let key = source.key
        let advice =
            fromCredentialed
            // The challenge of the scheme the credential was sent with: a
            // DPoP-bound token's refusal comes as a DPoP challenge (RFC 9449 §7.1).
            ? BearerChallenge(
                fields: head.headerFields[values: .wwwAuthenticate],
                scheme: (sent ?? stored)?.proofKey != nil ? "dpop" : "bearer"
            ).map {
                Self.advice(
                    $0, account: key, refresh: refresh, mask: mask,
                    clientCredentials: (stored ?? sent)?.grantType == "client_credentials")
            } ?? "."
            : " from \(answering.redactedForLogs), where a redirect led; the credential was not sent there (not to another origin, nor back after one), so this is not about it."
        return CLIError(
            "\(method) \(target.redactedForLogs) answered HTTP \(status)\(hint)\(advice)", status: .providerError)
    }

    /// What became of the refresh an `invalid_token` asks for.
    enum RefreshOutcome {
        /// None could be tried for want of this setting (a client id).
        case blocked(String)
        /// One renewed the credential during this command (this command's
        /// refresh, or another process's that it took up), and the API
        /// refused the renewed token too: another refresh would not help.
        case renewedAndRefused
        /// The credential has no refresh token and the descriptor no refresh call.
        case impossible
        /// One was tried and failed (its error is logged beside the 401).
        case failed
    }

    /// The most scopes from an `insufficient_scope` challenge written out
    /// as a command to paste.
    static let scopesInAdvice = 10

    /// What the resource server's Bearer challenge says (RFC 6750 §3.1), and
    /// what to type about it: an `invalid_token` is renewed by a refresh or a
    /// new sign-in; `insufficient_scope` needs a sign-in with the scope named.
    /// Returns the rest of the sentence after "answered HTTP 401".
    /// - Parameter refresh: what became of the refresh that `CredentialSource`
    ///   tries for an `invalid_token`, seen from the store afterwards.
    /// - Parameter mask: the secrets the request could carry (a token, the
    ///   client secret): a server echoing the request in its challenge had
    ///   them printed whole, where the token endpoint's errors mask them.
    static func advice(
        _ challenge: BearerChallenge, account: CredentialKey, refresh: RefreshOutcome = .failed,
        mask: SecretMask = SecretMask([]), clientCredentials: Bool = false
    ) -> String {
        guard let error = challenge.error, !error.isEmpty else { return "." }
        // The way the account was signed in: a client's own grant is asked
        // for again with --client-credentials, not in a browser.
        let signInCommand =
            "authkit authorize \(ShellWord.account(account))" + (clientCredentials ? " --client-credentials" : "")
        var text = ": \(mask.apply(DisplayText.sanitized(error, limit: 60)))"
        if let description = challenge.errorDescription, !description.isEmpty {
            text += " (\(mask.apply(DisplayText.sanitized(description, limit: 200))))"
        }
        switch error {
        case "invalid_token":
            // CredentialSource has already refreshed and retried where the credential allows it.
            text += ". The token was not accepted (expired early, revoked, or for another audience), and "
            let signIn = "sign in again: \(signInCommand)."
            switch refresh {
            case .blocked(let missing):
                text +=
                    "no refresh could be tried: \(missing) With it, authkit renews the credential and sends the request again."
            case .renewedAndRefused:
                text +=
                    "a refresh renewed it just now, but the API refused the new token as well (the account may have lost access to this API): "
                    + signIn
            case .impossible:
                text += "it cannot be refreshed (the provider gave no refresh token): " + signIn
            case .failed:
                text += "a refresh could not renew it: " + signIn
            }
        case "insufficient_scope":
            // The server's words go into a command to paste: scope tokens
            // only, none that reads as a flag, a few and short. A longer
            // list is counted, not cut: a command with ten of its twelve
            // scopes would sign in to a token refused again.
            // Nor one that holds a secret the request carried (a server or
            // proxy echoing it): `error` and its description were masked, the
            // scopes printed whole, and put in a command to paste.
            let given = challenge.scope ?? ""
            let named = mask.apply(given) == given ? given.split(separator: " ").map(String.init) : []
            let scopes = named.filter { ScopeToken.problem($0) == nil && !$0.hasPrefix("-") && $0.count <= 100 }
            if named.count > Self.scopesInAdvice {
                text +=
                    ". It needs \(named.count) scopes (\(DisplayText.sanitized(named.joined(separator: " "), limit: 300))): sign in again with them, \(signInCommand) with a --scope for each."
            } else {
                text +=
                    scopes.isEmpty || scopes.count != named.count
                    ? ". The token lacks a scope this request needs: sign in again with it, \(signInCommand) --scope …."
                    : ". It needs the scope \(DisplayText.sanitized(scopes.joined(separator: " "), limit: 300)): sign in again with it, \(signInCommand) \(scopes.map { "--scope " + ShellWord.quoted($0) }.joined(separator: " "))."
            }
        default:
            text += "."
        }
        return text
    }
}
