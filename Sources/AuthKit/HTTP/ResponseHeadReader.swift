import HTTPTypes

/// An answer's head, read from the lines libcurl's header callback hands
/// over (``CurlHTTPClient``) by the rules libcurl reads them by, so that the
/// fields AuthKit checks are the ones libcurl frames the body by.
///
/// - A head's status line is its first line, and only that: the answer's
///   first line, and the first after an interim (1xx) head's blank line.
///   libcurl reads every later line as a header field, whatever it starts
///   with. `HTTP/x 200 a: b` read as a new status line here wiped the fields
///   checked for framing (two `Content-Length`s, one beside `chunked`: RFC
///   9112 §6.3) while libcurl still framed the body by them; after a `100
///   Continue`, it ended the head early and left the real final head to be
///   read as trailers, unchecked.
/// - Every other line is a field, `name: value` (RFC 9112 §5.1), or the
///   continuation of the one before it (obs-fold, §5.2). A line with a
///   colon that is still no field (`Bad Name : x`) is passed over: libcurl
///   matches the fields it frames by on `Name:` at a line's start, so it
///   frames nothing by that line either. (A line without a colon libcurl
///   7.88 refuses itself, "Weird server reply"; should one arrive here, it
///   is passed over alike.)
/// - The head ends at a line that begins with CR or LF, libcurl's rule (a
///   line of spaces does not end it). The final head's framing is checked there.
struct ResponseHeadReader {
    /// What a line did to the head.
    enum Outcome: Equatable {
        /// The head goes on (or an interim one ended).
        case reading
        /// The final head ended, and its framing can be trusted.
        case ended
        /// The head is refused, for this reason (a message's detail).
        case refused(String)
    }

    /// The status code of the head being read (of the final head, once it has ended).
    private(set) var status = 0
    /// Its fields.
    private(set) var fields = HTTPFields()
    /// The folded lines that continue the last field, gathered to be joined
    /// to it once (``joinFolds()``).
    private var folds = ""
    /// How many times a field's value was rewritten to join its folded
    /// lines: once per folded field, however many lines it was folded onto.
    /// Each rewrite checks the whole value again (swift-http-types), so one
    /// per line was quadratic: 32,000 folded lines, within the 128 KiB a head
    /// may take, held a transfer's thread for 18 s. Tests count them here.
    private(set) var foldsJoined = 0
    /// Whether the next line is a head's first: its status line.
    private var atHeadStart = true

    /// Reads one line, as libcurl hands it over (with its CRLF or LF).
    mutating func read(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        // The line ends in CRLF (or LF); dropped before decoding, so trimming copies nothing.
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
        if line.allSatisfy({ $0 < 0x80 }) { return readASCII(line, first: bytes.first) }
        return readText(String(decoding: line, as: UTF8.self), first: bytes.first)
    }

    /// ``read(_:)`` for any line, decoded without its line end; `first` is
    /// the first byte libcurl handed over. Lines of ASCII alone take
    /// ``readASCII(_:first:)``, which tests hold to this.
    mutating func readText(_ decoded: String, first: UInt8?) -> Outcome {
        let text = decoded.trimmingSpacesAndNewlines()
        if atHeadStart {
            atHeadStart = false
            return readStatusLine(text)
        }
        if first == UInt8(ascii: "\r") || first == UInt8(ascii: "\n") {
            // The blank line ends the head, by libcurl's rule: a line whose
            // first byte is CR or LF (`\r\n`, `\n`, and `\r \r\n` too), so
            // both read the same head. A line of spaces is not one: taken
            // as the end, the fields after it were read as trailers,
            // unchecked by the framing rules, while libcurl still framed
            // the body by them.
            return endHead()
        }
        if text.isEmpty {
            // Whitespace alone, inside a head: it adds nothing (an obs-fold
            // of nothing, RFC 9112 §5.2).
            return .reading
        }
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            // obs-fold: libcurl hands a folded field's continuation over as a
            // line of its own. It belongs to the field before it, joined by a
            // space (RFC 9112 §5.2); read alone, `WWW-Authenticate` lost its
            // `error`, and a continuation with a colon became a field. One
            // right after the status line has no field: it is ignored (§2.2).
            if !fields.isEmpty {
                folds += " "
                folds += text
            }
            return .reading
        }
        joinFolds()
        guard let colon = text.firstIndex(of: ":"), let name = HTTPField.Name(String(text[..<colon])) else {
            return .reading // no field (see above)
        }
        fields.append(HTTPField(name: name, value: text[text.index(after: colon)...].trimmingSpaces()))
        return .reading
    }

    /// ``read(_:)`` for a line of ASCII bytes alone (every real answer's
    /// head), worked out on the bytes: the same trimming (for ASCII,
    /// `isSpaceOrNewline` is tab, LF to CR and space; `isSpace` tab and
    /// space), the same colon, the same strings made. Searching and
    /// trimming the line as a `String`, by characters, was most of the
    /// reading's time: the head was 4.5% of a loopback code exchange's CPU
    /// at 16 at once, on its bytes 2.7% (perf, docs/performance.md).
    mutating func readASCII(_ line: UnsafeRawBufferPointer, first: UInt8?) -> Outcome {
        func isSpaceOrNewline(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        var start = 0
        var stop = line.count
        while start < stop, isSpaceOrNewline(line[start]) { start += 1 }
        while stop > start, isSpaceOrNewline(line[stop - 1]) { stop -= 1 }
        func text(_ from: Int, _ to: Int) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: line[from..<to]), as: UTF8.self)
        }
        if atHeadStart {
            atHeadStart = false
            return readStatusLine(text(start, stop))
        }
        if first == UInt8(ascii: "\r") || first == UInt8(ascii: "\n") { return endHead() }
        if start == stop { return .reading }
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            if !fields.isEmpty {
                folds += " "
                folds += text(start, stop)
            }
            return .reading
        }
        joinFolds()
        guard let colon = line[start..<stop].firstIndex(of: UInt8(ascii: ":")),
            let name = HTTPField.Name(text(start, colon))
        else { return .reading }
        var valueStart = colon + 1
        while valueStart < stop, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        fields.append(HTTPField(name: name, value: text(valueStart, stop)))
        return .reading
    }

    /// The blank line: an interim head ends (the next line is a status
    /// line), or the final one, its framing checked.
    private mutating func endHead() -> Outcome {
        joinFolds()
        guard status >= 200 else {
            atHeadStart = true
            return .reading
        }
        if let problem = fields.framingProblem { return .refused(problem) }
        return .ended
    }

    /// Joins the folded lines gathered to the field they continue, in one
    /// rewrite of its value (see ``foldsJoined``).
    private mutating func joinFolds() {
        guard !folds.isEmpty, let last = fields.indices.last else { return }
        fields[last].value += folds
        foldsJoined += 1
        folds = ""
    }

    /// A head's first line: a new head, with no fields yet.
    private mutating func readStatusLine(_ text: String) -> Outcome {
        // RFC 9112 §4: the status code is three digits. libcurl 7.88 reads
        // an `HTTP/2 99999` line on an HTTP/1.1 connection without a bound,
        // and HTTPResponse.Status traps on a code above 999: one line of a
        // server's stopped the process.
        guard text.hasPrefix("HTTP/"), let code = Self.statusCode(inStatusLine: text) else {
            return .refused(
                "its status line '\(DisplayText.sanitized(text, limit: 40))' has no three-digit status code (RFC 9112 §4)"
            )
        }
        status = code
        fields = HTTPFields()
        // Never asked for (no Upgrade is sent); libcurl would take up the
        // offer (h2c) and wait on the other protocol's bytes.
        return code == 101 ? .refused(FlowTransport.switchedProtocol) : .reading
    }

    /// The status code of a status line (`HTTP/1.1 200 OK`): the three
    /// digits after the version and one space, 100 to 999; nil for
    /// anything else (RFC 9112 §4: `status-code = 3DIGIT`).
    static func statusCode(inStatusLine line: String) -> Int? {
        // Read in place (splitting the line made a list of its parts per answer).
        let bytes = line.utf8
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        var code = 0
        var index = bytes.index(after: space)
        for _ in 0..<3 {
            guard index != bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9")
            else { return nil }
            code = code * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index = bytes.index(after: index)
        }
        // The three digits end the line, or a space does.
        guard index == bytes.endIndex || bytes[index] == UInt8(ascii: " ") else { return nil }
        return code >= 100 ? code : nil
    }
}
