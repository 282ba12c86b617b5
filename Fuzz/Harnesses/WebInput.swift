import Foundation

// libFuzzer harness: what a web sign-in reads from a browser's request
// before anything else (AuthKitServer): the return path after sign-in (the
// open-redirect guard, RFC 9700 §4.11) and a cookie by its exact name among
// `Cookie` fields (login CSRF and session fixation hang on it). The first
// byte chooses which; for cookies, the first line is the name and each
// further line a `Cookie` field.
@testable import AuthKitServer

func fuzzWebInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    if bytes[0] & 1 == 0 {
        returnPath(text)
    } else {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        cookie(named: lines.first ?? "", in: Array(lines.dropFirst()))
    }
    return 0
}

/// An accepted return path stays on the site whichever way a browser reads
/// it: with the tabs and line breaks the URL standard strips taken out and
/// backslashes read as slashes, it still starts with one `/` only; joined
/// to the site's address, the host is the site's.
private func returnPath(_ text: String) {
    guard let path = ReturnPath.checked(text) else { return }
    if text.isEmpty {
        precondition(path == "/", "an empty return path became \(path.debugDescription)")
        return
    }
    precondition(path == text, "an accepted return path was changed: \(path.debugDescription)")
    let asRead = path.utf8.filter { ![0x09, 0x0A, 0x0D].contains($0) }
        .map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "/") : $0 }
    precondition(
        asRead.first == UInt8(ascii: "/") && asRead.dropFirst().first != UInt8(ascii: "/"),
        "a return path a browser reads as another site's: \(path.debugDescription)")
    if let url = URLComponents(string: "https://site.example" + path) {
        precondition(url.host == "site.example", "a return path moved the host: \(path.debugDescription)")
    }
}

/// A value is found only when exactly one pair's name is the name byte for
/// byte once spaces and tabs around it are trimmed (an independent reading:
/// pairs cut at every `;` of the UTF-8 bytes), and it is that pair's
/// trimmed value; with no such pair, or two, none.
private func cookie(named name: String, in fields: [String]) {
    guard !name.isEmpty else { return } // no cookie of AuthKit's is nameless
    let found = WebCookie.value(named: name, inCookieFields: fields)
    var matches = [[UInt8]]()
    for field in fields {
        var pair = [UInt8]()
        for byte in Array(field.utf8) + [UInt8(ascii: ";")] {
            guard byte == UInt8(ascii: ";") else {
                pair.append(byte)
                continue
            }
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
            if trimmed(pair[..<equals]).elementsEqual(name.utf8) {
                matches.append(equals < pair.count ? trimmed(pair[(equals + 1)...]) : [])
            }
            pair = []
        }
    }
    if matches.count == 1 {
        precondition(found != nil, "the one cookie named \(name.debugDescription) was not found")
        precondition(
            found.map { Array($0.utf8) } == matches[0] || found == String(decoding: matches[0], as: UTF8.self),
            "another value than the cookie's: \(found.debugDescription)")
        precondition(found.map { !$0.utf8.contains(UInt8(ascii: ";")) } ?? true, "a value holding ';'")
    } else {
        precondition(found == nil, "\(matches.count) cookies named \(name.debugDescription), and one was taken")
    }
}

private func trimmed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    var slice = bytes.drop(while: isBlank)
    while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
    return Array(slice)
}
