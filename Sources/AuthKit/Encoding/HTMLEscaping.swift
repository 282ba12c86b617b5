/// Text made safe for HTML element content and attribute values: the pages
/// AuthKit serves (the loopback listener's answer, the sandbox's consent
/// page) show values that come from a request or a provider.
package enum HTMLEscaping {
    package static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(character)
            }
        }
        return output
    }
}
