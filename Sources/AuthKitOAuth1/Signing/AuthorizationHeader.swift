import AuthKit

/// The `Authorization: OAuth …` header value of RFC 5849 §3.5.1.
///
/// "Parameter names and values are encoded per Parameter Encoding (§3.6)",
/// each value in double quotes, pairs separated by a comma (we add the optional
/// space, as Twitter's documentation does). `realm`, if given, comes first and
/// is not signed.
enum AuthorizationHeader {
    static func render(_ parameters: [(String, String)], realm: String?) -> String {
        var output = [UInt8]()
        output.reserveCapacity(400)
        output.append(contentsOf: "OAuth ".utf8)
        var first = true
        func append(_ name: String, _ value: String) {
            if !first { output.append(contentsOf: ", ".utf8) }
            first = false
            PercentEncoding.appendEncoded(name.utf8, to: &output)
            output.append(contentsOf: "=\"".utf8)
            PercentEncoding.appendEncoded(value.utf8, to: &output)
            output.append(UInt8(ascii: "\""))
        }
        if let realm { append("realm", realm) }
        for (name, value) in parameters { append(name, value) }
        return String(decoding: output, as: UTF8.self)
    }
}
