import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Musl)
    @preconcurrency import Musl
#elseif canImport(Darwin)
    @preconcurrency import Darwin
#endif

/// Where `authkit` writes. Results go to standard output, everything else
/// (prompts, progress, warnings, errors) to standard error, so
/// `authkit … --json | jq` always reads clean JSON.
enum Console {
    /// Prints a line of results; a status line on the screen is erased first
    /// (``StatusLine/printing(_:)``).
    static func out(_ text: String) {
        StatusLine.printing { write(Data((text + "\n").utf8), to: STDOUT_FILENO) }
    }

    /// Prints a line of messages; a status line on the screen is erased first.
    /// Control characters other than line breaks and tabs are written out
    /// (``visible(_:)``).
    /// `request -s`: only errors reach standard error.
    nonisolated(unsafe) static var quiet = false

    /// ``err(_:)`` for a note a command may reach twice (the override note,
    /// said where the descriptor is looked up, which `request` and `token
    /// header` do twice): said once per process.
    /// What a sign-in asks of the person at the terminal (`--manual`'s URL
    /// and paste prompt), on standard error as written, line ends
    /// included: wrapped at the terminal's width as every message is (a
    /// URL, one word, stays whole), and shown under `-s` too.
    static func prompt(_ text: String) {
        let text = visible(text) // a provider's name is a descriptor's text
        let shown = columns(of: STDERR_FILENO).map { LineWrapping.wrapped(text, columns: $0) } ?? text
        StatusLine.printing { write(Data(shown.utf8), to: STDERR_FILENO) }
    }

    static func errOnce(_ text: String) {
        guard said.withLock({ $0.insert(text).inserted }) else { return }
        err(text)
    }

    private static let said = LockedValue<Set<String>>([])

    static func err(_ text: String) {
        // `--verbose`'s log lines (`authkit [label]: …`, ConsoleLogHandler)
        // were asked for by name: shown beside `-s` too, as curl's `-sv` does.
        if quiet, !text.hasPrefix("authkit: error:"), !text.hasPrefix("authkit [") { return }
        let shown = columns(of: STDERR_FILENO).map { LineWrapping.wrapped(visible(text), columns: $0) } ?? visible(text)
        StatusLine.printing { write(Data((shown + "\n").utf8), to: STDERR_FILENO) }
    }

    /// Prints a line of prose on standard output (what a command did, the
    /// steps of `sandbox try`), wrapped at word boundaries on a terminal
    /// (``LineWrapping``); results a program reads go through ``out(_:)``.
    /// `keeping`: as for ``LineWrapping/wrapped(_:columns:hanging:keeping:)``.
    static func say(_ text: String, hanging: Int = 0, keeping: Int = 0) {
        out(outputColumns.map { LineWrapping.wrapped(text, columns: $0, hanging: hanging, keeping: keeping) } ?? text)
    }

    /// `text` with its control characters (but line feeds and tabs) and
    /// hidden formatting characters written out as `\u{1B}`. Messages name
    /// paths, labels and ids the user or another program chose (a directory
    /// named with an escape sequence in `$AUTHKIT_HOME`); each place that
    /// shows one escapes it too, and this holds for the places that forget.
    static func visible(_ text: String) -> String {
        guard
            text.unicodeScalars.contains(where: {
                $0 != "\n" && $0 != "\t" && ($0.isTerminalControl || $0.isHiddenFormatting)
            })
        else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in
                line.split(separator: "\t", omittingEmptySubsequences: false).map {
                    DisplayText.sanitized(String($0), limit: .max)
                }.joined(separator: "\t")
            }
            .joined(separator: "\n")
    }

    /// Flushes what stdio holds for standard output and standard error
    /// (argument-parser's help, `print`), before the process ends with `_exit`.
    /// Not `fflush(NULL)`: it takes every stream's lock, standard input's
    /// too, which a reader blocked in `getline` holds, so a signal during
    /// a wait for input would wait for that input. Every way the process
    /// ends calls this, so it also puts the terminal's settings back if
    /// ``readLine(limit:echo:prompt:)`` had changed them.
    static func flushStandardStreams() {
        restoreTerminal()
        fflush(stdout)
        fflush(stderr)
    }

    /// Writes all of `data`, or as much as the reader takes: a closed pipe
    /// must not crash a sign-in that can still store its credential
    /// (``FileSystem/writeAll(_:_:)``). Returns false when the write failed
    /// or the reader is gone.
    @discardableResult
    static func write(_ data: Data, to descriptor: Int32) -> Bool {
        let closed = descriptor == STDOUT_FILENO && outputWasClosed.withLock { $0 }
        let written = !closed && data.withUnsafeBytes { FileSystem.writeAll(descriptor, $0) }
        let failure = closed ? EBADF : written ? 0 : errno
        if descriptor == STDOUT_FILENO, !written, failure != EPIPE {
            outputFailure.withLock { $0 = $0 ?? failure }
        }
        return written
    }

    /// The first write to standard output that failed for a reason other
    /// than a reader that left (`| head`): a full disk, a closed descriptor.
    /// What was printed is then incomplete, and `main` does not end with
    /// success (``ExitStatus/outputFailed``): `authkit token header > h`
    /// on a full disk would otherwise leave a script an empty file and exit 0.
    static var outputFailureReason: String? {
        outputFailure.withLock { $0 }.map { $0 == 0 ? "nothing more could be written" : String(cString: strerror($0)) }
    }

    private static let outputFailure = LockedValue<Int32?>(nil)
    private static let outputWasClosed = LockedValue(false)

    /// Opens /dev/null on standard input, output or error where the parent
    /// left one closed (`authkit … >&-`). Otherwise the next descriptor
    /// opened takes its number (an event descriptor of the runtime's, as
    /// seen: writes failed with "Invalid argument" and authkit exited 0; a
    /// socket or a file could take it as well), and what is printed goes there. Output meant for a closed
    /// standard output is refused instead (``outputFailureReason``). Called
    /// first thing in `main`, before any file is opened.
    static func reopenClosedStandardDescriptors() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO]
        where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", (descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
            guard null >= 0 else { continue }
            if null != descriptor {
                dup2(null, descriptor)
                close(null)
            } else {
                // open(2) took the lowest free number, this one; keep it open across exec.
                _ = fcntl(descriptor, F_SETFD, 0)
            }
            if descriptor == STDOUT_FILENO { outputWasClosed.withLock { $0 = true } }
        }
    }

    /// Pretty, key-sorted JSON of `value` on standard output.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        out(escapingInvisibles(String(decoding: try encoder.encode(value), as: UTF8.self)))
    }

    /// JSON whose strings hold what a terminal would obey or hide, written
    /// as `\uXXXX` instead: DEL and the C1 controls (U+009B is CSI, U+009D
    /// OSC), the hidden formatting characters (bidirectional overrides) and
    /// the line and paragraph separators. JSONEncoder escapes only U+0000–
    /// U+001F, and claims or fields from a provider reach the terminal
    /// through `--json`. The same JSON, to a parser; outside strings JSON
    /// holds only ASCII, so the whole text can be rewritten.
    static func escapingInvisibles(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: needsEscape) else { return json }
        var escaped = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard needsEscape(scalar) else {
                escaped.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            escaped.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return String(escaped)
    }

    /// All in the Basic Multilingual Plane: one `\uXXXX` each.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        (0x7F...0x9F).contains(scalar.value) || scalar.isHiddenFormatting
    }

    /// The width of the terminal `descriptor` is, or `nil` when it is not
    /// one (a file, a pipe) or does not say.
    static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard isatty(descriptor) != 0, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else {
            return nil
        }
        return Int(size.ws_col)
    }

    /// Whether standard input is a terminal: a person who can paste an answer.
    static var inputIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }

    /// The terminal's settings while ``readLine(limit:echo:prompt:)`` has
    /// changed them: put back by ``restoreTerminal()`` on every way out.
    private static let echoingTerminal = LockedValue<termios?>(nil)

    /// One line of standard input, of at most `limit` bytes; `prompt` is
    /// said first at a terminal.
    ///
    /// At a terminal the line is read with the terminal's line editing off
    /// (non-canonical mode): in it the kernel keeps at most 4,095 bytes of
    /// a line (macOS: 1,024) and drops the rest of a longer paste without a
    /// word, so a long token was stored cut short, and a long redirect URL
    /// refused as another sign-in's. Erase (Backspace), kill (Ctrl-U) and
    /// end-of-file (Ctrl-D on an empty line) are done here instead. With
    /// `echo` false nothing typed is shown, as at a password prompt: a
    /// pasted token is neither on the screen nor in the scrollback or a
    /// terminal multiplexer's log. Ctrl-C meanwhile ends the process through
    /// ``Interrupt``, which puts the terminal back first (the default action
    /// would leave the shell without echo). Not a terminal: the line as it
    /// comes (``FileSystem/readLine(_:limit:)``).
    static func readLine(limit: Int, echo: Bool, prompt: String? = nil) -> FileSystem.Line {
        var settings = termios()
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &settings) == 0 else {
            return FileSystem.readLine(STDIN_FILENO, limit: limit)
        }
        Interrupt.installShield()
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
        withUnsafeMutableBytes(of: &raw.c_cc) { controls in
            controls[Int(VMIN)] = 1
            controls[Int(VTIME)] = 0
        }
        let (erase, kill, end, wordErase) = withUnsafeBytes(of: settings.c_cc) {
            ($0[Int(VERASE)], $0[Int(VKILL)], $0[Int(VEOF)], $0[Int(VWERASE)])
        }
        // The echo goes to the terminal itself, as the kernel's did: on
        // standard error, `2>log` put the pasted URL (its code, its state)
        // in the log, and showed nothing.
        let terminal = echo ? open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY) : -1
        echoingTerminal.withLock { $0 = settings }
        // Off before the prompt shows: a paste that follows it at once is not echoed either.
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        var finished = false
        defer {
            restoreTerminal()
            // The Enter that was not echoed, or the end of a line cut short.
            if !echo || !finished { err("") }
            if terminal >= 0 { close(terminal) }
        }
        if let prompt { err(prompt) }
        func show(_ text: String) {
            guard terminal >= 0 else { return }
            _ = Array(text.utf8).withUnsafeBytes { FileSystem.writeAll(terminal, $0) }
        }
        var line = LineEditor(limit: limit)
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return line.bytes.isEmpty ? .end : line.ended }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                show("\n")
                finished = true
                return line.ended
            case erase, 0x7F, 0x08:
                if line.eraseLast() { show("\u{8} \u{8}") }
            case kill:
                show(String(repeating: "\u{8} \u{8}", count: line.eraseAll()))
            case wordErase:
                show(String(repeating: "\u{8} \u{8}", count: line.eraseWord()))
            case end:
                // As the terminal's own: on an empty line the input's end,
                // else what was typed, without a newline.
                return line.bytes.isEmpty ? .end : line.ended
            case ..<0x20:
                // Another control character (an escape sequence's ESC, a
                // tab): no token or URL holds one, and echoed it would act
                // on the terminal.
                continue
            default:
                guard line.append(byte) else {
                    Self.discardRestOfLine(after: raw)
                    return .tooLong(limit: limit)
                }
                // ASCII as typed; a character beyond it as one '?' (its
                // first byte), which a UTF-8 terminal could otherwise read
                // as a control of its own (U+009B starts a sequence).
                if byte < 0x80 {
                    show(String(UnicodeScalar(byte)))
                } else if byte >= 0xC0 {
                    show("?")
                }
            }
        }
    }

    /// Reads and drops the rest of a line too long to take, and what the
    /// terminal still holds: left there, the shell read it as a command
    /// once the program ended (the tail of a pasted token, run and kept in
    /// its history). Waits at most 0.2 s for each further byte of a paste
    /// still arriving.
    private static func discardRestOfLine(after settings: termios) {
        var waiting = settings
        withUnsafeMutableBytes(of: &waiting.c_cc) { controls in
            controls[Int(VMIN)] = 0
            controls[Int(VTIME)] = 2
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &waiting)
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count != 1 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
        }
        tcflush(STDIN_FILENO, TCIFLUSH)
    }

    /// The line ``readLine(limit:echo:prompt:)`` builds at a terminal, with
    /// the edits the terminal's own line editing would have made.
    struct LineEditor {
        let limit: Int
        private(set) var bytes: [UInt8] = []

        init(limit: Int) { self.limit = limit }

        /// False when the line would be longer than `limit`.
        mutating func append(_ byte: UInt8) -> Bool {
            guard bytes.count < limit else { return false }
            bytes.append(byte)
            return true
        }

        /// Removes the last character (all the bytes of its UTF-8 form);
        /// false when there was none.
        mutating func eraseLast() -> Bool {
            guard !bytes.isEmpty else { return false }
            while let last = bytes.popLast(), last & 0xC0 == 0x80, !bytes.isEmpty {}
            return true
        }

        /// Removes the last word and the spaces after it (Ctrl-W); returns
        /// how many characters went.
        mutating func eraseWord() -> Int {
            var removed = 0
            while bytes.last == UInt8(ascii: " "), eraseLast() { removed += 1 }
            while let last = bytes.last, last != UInt8(ascii: " "), eraseLast() { removed += 1 }
            return removed
        }

        /// Removes every character; returns how many there were.
        mutating func eraseAll() -> Int {
            defer { bytes = [] }
            return String(decoding: bytes, as: UTF8.self).count
        }

        /// The line as ``FileSystem/readLine(_:limit:)`` gives it.
        var ended: FileSystem.Line { .line(String(decoding: bytes, as: UTF8.self)) }
    }

    /// Puts back the terminal settings ``readLine(limit:echo:prompt:)`` changed, if it has.
    static func restoreTerminal() {
        let saved = echoingTerminal.withLock { saved in
            defer { saved = nil }
            return saved
        }
        guard var settings = saved else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    /// Standard output's terminal width, or `nil` when it is not a terminal.
    static var outputColumns: Int? { columns(of: STDOUT_FILENO) }

    /// Whether standard error is a terminal that acts on cursor movement
    /// and erase sequences: not with `TERM=dumb` (an Emacs shell buffer, some
    /// CI logs), which shows them as `^[[K`.
    static var stderrTakesEscapes: Bool {
        guard isatty(STDERR_FILENO) != 0 else { return false }
        guard let term = getenv("TERM") else { return true }
        return String(cString: term) != "dumb"
    }
}

/// Whether a browser can be opened on this machine, and if not, why.
enum BrowserAvailability {
    /// `nil` when one can (a `$BROWSER`, a display, a Mac's own session); else
    /// what is missing, for the message.
    static func missing(_ environment: [String: String]) -> String? {
        if let browser = environment["BROWSER"], !browser.trimmingSpaces().isEmpty { return nil }
        let overSSH = environment["SSH_CONNECTION"] != nil || environment["SSH_TTY"] != nil
        #if os(macOS)
            return overSSH ? "an SSH session: the browser would open on the remote Mac's screen" : nil
        #else
            let display = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
            if display { return nil }
            return overSSH
                ? "an SSH session without a display"
                : "no display ($DISPLAY and $WAYLAND_DISPLAY are unset) and no $BROWSER"
        #endif
    }
}

extension String {
    /// This text cut or padded with spaces to `width` terminal columns: a
    /// column of a table (`padding(toLength:withPad:startingAt:)` is
    /// Foundation's, which authkit does not link on Linux, and counts
    /// characters, not columns).
    func padded(to width: Int) -> String {
        let (kept, used) = prefix(columns: width)
        return kept + String(repeating: " ", count: width - used)
    }

    /// This text cut to at most `columns` terminal columns, with `…` (one
    /// column) where it was cut; unchanged when it fits.
    func cut(toColumns columns: Int) -> String {
        guard terminalColumns > columns else { return self }
        return prefix(columns: columns - 1).text + "…"
    }

    /// This text cut to `columns` terminal columns with `…` in the middle:
    /// for names that differ at their end (`client-acme-production`,
    /// `client-acme-staging`), which a cut at the end made alike.
    func cutInMiddle(toColumns columns: Int) -> String {
        guard terminalColumns > columns, columns >= 5 else { return cut(toColumns: columns) }
        let head = prefix(columns: (columns - 1) / 2)
        let tail = String(String(reversed()).prefix(columns: columns - 1 - head.columns).text.reversed())
        return head.text + "…" + tail
    }

    /// The longest start of this text that fits `columns` terminal columns
    /// (a wide character that would straddle the edge is left out), and
    /// the columns it takes.
    private func prefix(columns: Int) -> (text: String, columns: Int) {
        var kept = ""
        var used = 0
        for character in self {
            let width = character.terminalColumns
            if used + width > columns { break }
            kept.append(character)
            used += width
        }
        return (kept, used)
    }

    /// How many columns a terminal gives this text: two for each wide
    /// character (CJK, Hangul, fullwidth forms, emoji; Unicode's East Asian
    /// Width W and F), none for a lone combining mark or format character,
    /// one for any other. A label such as 仕事 would otherwise push the
    /// columns after it out of line. Ambiguous-width characters (A) count as
    /// one, as terminals outside East Asian locales show them.
    var terminalColumns: Int { reduce(0) { $0 + $1.terminalColumns } }
}

extension Character {
    var terminalColumns: Int {
        guard let first = unicodeScalars.first else { return 0 }
        if WideCharacters.contains(first.value) { return 2 }
        // U+FE0F asks for the emoji form, two columns wide: ❤️ (U+2764 U+FE0F).
        if unicodeScalars.contains("\u{FE0F}") { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return 1
        }
    }
}
