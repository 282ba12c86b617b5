/// Messages broken at word boundaries to fit a terminal's width: left to the
/// terminal, a line is cut wherever the width ends ("n|othing leaves",
/// "accou|nt alice" at 80 columns).
///
/// Only prose on a terminal is wrapped: a file or a pipe gets each message
/// on one line, as before, so that scripts can match it; tokens, JSON and
/// tables are never wrapped (they are not prose, and an inserted line break
/// would change what is copied).
///
/// A command the message tells the user to run (`authkit …`, `chmod …`,
/// `rm …`, `secret-tool …`, `fuser …`) is kept on one line where it fits:
/// copied from the terminal and pasted, a command split over two lines runs
/// its first half. A command or a word (a URL) longer than the line is left
/// whole, for the terminal to fold; pasted, that is still one line.
enum LineWrapping {
    /// The words that start a command kept together.
    static let commandWords: Set<String> = ["authkit", "chmod", "rm", "secret-tool", "fuser", "export", "curl"]

    /// `text` with each of its lines broken at spaces into lines of at most
    /// `columns` terminal columns; a continuation keeps its line's
    /// indentation, and `hanging` more (under the text of "1. Sign in…").
    /// `keeping`: the first that many characters after the indentation, and
    /// the rest of the word they end in, stay together (a label padded to
    /// its column and the value after it: `token:         https://…`).
    static func wrapped(_ text: String, columns: Int, hanging: Int = 0, keeping: Int = 0) -> String {
        guard columns >= 20 else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { wrap(String($0), columns: columns, hanging: hanging, keeping: keeping) }
            .joined(separator: "\n")
    }

    private static func wrap(_ line: String, columns: Int, hanging: Int, keeping: Int) -> String {
        guard line.terminalColumns > columns, !line.contains("\t") else { return line }
        let indentation = String(line.prefix { $0 == " " })
        let continuation = indentation + String(repeating: " ", count: hanging)
        var body = line.dropFirst(indentation.count)
        var items = [String]()
        if keeping > 0 {
            let kept = body.index(body.startIndex, offsetBy: keeping, limitedBy: body.endIndex) ?? body.endIndex
            let end = body[kept...].firstIndex(of: " ") ?? body.endIndex
            items.append(String(body[..<end]))
            body = end < body.endIndex ? body[body.index(after: end)...] : body[end...]
        }
        // Items: runs of words that stay together (a command) or single words.
        let words = body.isEmpty ? [] : body.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        var command: [String]?
        for word in words {
            if var open = command {
                open.append(word)
                if endsCommand(open) {
                    items.append(open.joined(separator: " "))
                    command = nil
                } else {
                    command = open
                }
            } else if commandWords.contains(word.trimmingLeading("'`\"(")) {
                command = [word]
                if endsCommand([word]) && word.count > 1 && word.hasSuffix("'") {
                    items.append(word)
                    command = nil
                }
            } else {
                items.append(word)
            }
        }
        if let command { items.append(command.joined(separator: " ")) }

        var lines = [String]()
        var current = indentation
        var currentHasWords = false
        for item in items {
            let candidate = currentHasWords ? current + " " + item : current + item
            if candidate.terminalColumns <= columns || !currentHasWords {
                current = candidate
                currentHasWords = true
            } else {
                lines.append(current)
                current = continuation + item
            }
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }

    /// Whether a command's text has ended with its last word: the sentence
    /// or the quote goes on without it. A `'` ends it only where it closes
    /// the quote around the command (`'authkit token print'`), not one the
    /// command holds whole: `--label ''` (the unlabelled account) ended it,
    /// and the arguments after went to the next line, where a pasted first
    /// line ran without them.
    private static func endsCommand(_ words: [String]) -> Bool {
        guard let word = words.last, let last = word.last else { return false }
        if last == "'" {
            let quotes = words.reduce(0) { $0 + $1.count { $0 == "'" } }
            let quoted = words.first?.trimmingLeading("`\"(").hasPrefix("'") ?? false
            // Quoted: ended once every quote is closed; else only by a quote
            // closing one opened before the command.
            return quoted ? quotes % 2 == 0 : quotes % 2 == 1
        }
        return [".", ",", ";", ":", ")", "`", "\""].contains(last) && !word.hasSuffix("...")
    }
}

extension String {
    fileprivate func trimmingLeading(_ characters: String) -> String {
        String(drop { characters.contains($0) })
    }
}
