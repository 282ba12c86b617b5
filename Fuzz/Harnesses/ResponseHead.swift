// libFuzzer harness: the default transport's head reader (ResponseHeadReader)
// on arbitrary bytes, split into lines as libcurl hands them over (each with
// its LF), as a hostile server may send them.
@testable import AuthKit

func fuzzResponseHead(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    // Lines as libcurl cuts them: up to and with each LF; the rest, if any, last.
    var lines: [UnsafeRawBufferPointer] = []
    var lineStart = 0
    for index in 0..<count where bytes[index] == UInt8(ascii: "\n") {
        lines.append(UnsafeRawBufferPointer(rebasing: bytes[lineStart...index]))
        lineStart = index + 1
    }
    if lineStart < count { lines.append(UnsafeRawBufferPointer(rebasing: bytes[lineStart...])) }

    // Read twice: as the transport reads (an ASCII line on its bytes), and
    // every line as decoded text, the general path. They must agree after
    // every line, whatever the bytes.
    var byBytes = ResponseHeadReader()
    var asText = ResponseHeadReader()
    var ended = false
    for line in lines {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let outcome = byBytes.read(line)
        let textOutcome = asText.readText(
            String(decoding: UnsafeRawBufferPointer(rebasing: line[..<end]), as: UTF8.self), first: line.first)
        precondition(
            outcome == textOutcome && byBytes.status == asText.status && byBytes.fields == asText.fields
                && byBytes.foldsJoined == asText.foldsJoined,
            "the two readings differ at line \(String(decoding: line, as: UTF8.self).debugDescription): \(outcome) against \(textOutcome)"
        )
        // A status is a three-digit code once read; a head ends only final (2xx and up).
        precondition(byBytes.status == 0 || (100...999).contains(byBytes.status), "status \(byBytes.status)")
        switch outcome {
        case .ended:
            precondition(byBytes.status >= 200, "a head ended with status \(byBytes.status)")
            ended = true
        case .refused(let reason):
            requireNoControlCharacters(reason)
        case .reading:
            break
        }
        if ended { break }
        if case .refused = outcome { break }
    }
    return 0
}
