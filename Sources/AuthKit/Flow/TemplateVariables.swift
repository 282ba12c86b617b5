/// Values substituted for `{name}` in descriptor URLs, parameters and headers.
///
/// In a URL each value is percent-encoded, so a token in a path segment
/// (Qiita's `DELETE /access_tokens/{access_token}`) cannot change the URL's shape;
/// in parameters and headers the value is inserted as is and encoded with the
/// rest of the body.
struct TemplateVariables: Sendable {
    var values: [String: String]

    /// Replaces every `{name}`; throws naming the first one with no value.
    func render(_ template: String, inURL: Bool, field: String, providerID: String) throws -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = values[name] else {
                if DescriptorValidator.runtimeVariables.contains(name) {
                    throw AuthKitError.unsupported("\(field) needs {\(name)}, which this client or credential does not have.")
                }
                throw AuthKitError.missingSetting(
                    providerID: providerID, setting: "value for {\(name)} (used in \(field))",
                    hint: "Set \(ClientSettings.environmentPrefix(for: providerID))_\(ClientSettings.environmentPrefix(for: name).dropFirst(8)), or add \"placeholders\": {\"\(name)\": \"…\"} under \"providers\".\"\(providerID)\" in $AUTHKIT_HOME/config.json.")
            }
            output += inURL ? PercentEncoding.encode(value) : value
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output
    }
}
