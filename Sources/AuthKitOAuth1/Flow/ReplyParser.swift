import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns the answer of an OAuth 1.0a endpoint into form fields or a typed error.
///
/// RFC 5849 §2.1 and §2.3 replies are `application/x-www-form-urlencoded`, but
/// providers label them loosely (Twitter has sent them as `text/html`), so the
/// body is judged by its first byte, not by `Content-Type`:
/// - `<`: an HTML page (a proxy's error page, a login page) or an XML
///   document (Flickr's API errors) → an ``AuthKitError``
///   naming the page's `<title>`;
/// - `{`: JSON, which only errors use (Twitter's `{"errors":[{"code":32,"message":…}]}`);
/// - otherwise form fields; `error`/`error_description` (oauthlib) or
///   `oauth_problem`/`oauth_problem_advice` (the OAuth Problem Reporting
///   extension) make it an error whatever the status.
///
/// Messages quote the provider's own words, truncated and on one line; they
/// never echo a success body, which holds tokens, and any secret the client
/// knows (a server that echoes a PLAINTEXT signature would otherwise put the
/// consumer secret in an error message) is masked.
struct ReplyParser {
    var step: FlowStep
    /// Secrets to mask in quoted text: the consumer secret, token secrets.
    var secrets: [String] = []

    /// The fields of a 2xx form reply that contains every name in `required`.
    func fields(of response: IncomingResponse, required: [String]) throws -> [(String, String)] {
        let body = response.body
        let first = body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        let success = (200...299).contains(response.status)

        switch first {
        case UInt8(ascii: "<")?:
            let title = Self.htmlTitle(in: body).map { " titled '\(quote($0))'" } ?? ""
            let start = String(decoding: body.prefix(4096), as: UTF8.self).lowercased()
            let kind =
                ["<html", "<!doctype html", "<head", "<body", "<title"].contains(where: start.contains)
                ? "an HTML page" : "an XML document"
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .unreadableBody, "HTTP \(response.status) with \(kind)\(title) instead of form-encoded OAuth fields"
                ))
        case UInt8(ascii: "{")?, UInt8(ascii: "[")?:
            if var error = Self.jsonError(in: body, status: response.status) {
                error.code = quote(error.code)
                error.description = error.description.map { quote($0) }
                throw AuthKitError.providerError(step: step, error)
            }
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .unreadableBody, "HTTP \(response.status) with a JSON body, not form-encoded OAuth fields"))
        case nil:
            throw AuthKitError.invalidResponse(
                step: step, reason: .init(.unreadableBody, "HTTP \(response.status) with an empty body"))
        default:
            break
        }

        let text = String(decoding: body, as: UTF8.self)
        let pairs = FormURLEncoding.decode(text)
        if let pairs {
            let values = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
            if let code = values["error"] ?? values["oauth_problem"], !code.isEmpty {
                throw AuthKitError.providerError(
                    step: step,
                    ProviderErrorResponse(
                        status: response.status, code: quote(code),
                        description: (values["error_description"] ?? values["oauth_problem_advice"]).map { quote($0) },
                        uri: values["error_uri"].map { quote($0) }))
            }
        }
        guard success else {
            // Neither a form error nor JSON nor HTML: plain text such as
            // "Failed to validate oauth signature and token". Quote it.
            throw AuthKitError.providerError(
                step: step,
                ProviderErrorResponse(
                    status: response.status, code: "http_\(response.status)", description: quote(text)))
        }
        // Text with no `=` at all ("Signature mismatch…" sent with a 200) has
        // no name=value pair: read as a form it is one long field name, which
        // the message below would have printed whole as a "field present".
        guard let pairs, pairs.contains(where: { !$0.1.isEmpty || !$0.0.isEmpty }),
            body.contains(UInt8(ascii: "="))
        else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .unreadableBody,
                    "HTTP \(response.status) with a body that is not form-encoded OAuth fields (no name=value pair; a success body is not repeated here, it may hold tokens)"
                ))
        }
        var counts = [String: Int]()
        for (name, _) in pairs { counts[name, default: 0] += 1 }
        // Which of two tokens is the one? Taking the first, silently, would
        // guess (an OAuth 2.0 redirect with a parameter twice is refused too).
        // Every protocol field counts: `oauth_callback_confirmed=true&…=false`
        // was read as its first value. Counted once, not per name: a reply of
        // 100,000 `oauth_…` fields is a count, not 10¹⁰ comparisons.
        let protocolFields = required + counts.keys.filter { $0.hasPrefix("oauth_") }.sorted()
        if let twice = protocolFields.first(where: { (counts[$0] ?? 0) > 1 }) {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(.repeatedField(quote(twice)), "the reply names '\(quote(twice))' more than once"))
        }
        // RFC 5849 §3.4.2 signs with the token secret "even when" it is
        // empty: an empty one is a value. Every other required field needs one.
        let missing = required.filter { name in
            !pairs.contains { $0.0 == name && (!$0.1.isEmpty || name == "oauth_token_secret") }
        }
        guard missing.isEmpty else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .missingField(missing[0]),
                    "the reply has no \(missing.map { "'\($0)'" }.joined(separator: " or ")) (fields present: \(present(counts.keys)))"
                ))
        }
        // A token or its secret with a space, a control character or one
        // outside ASCII is no token a header can carry (RFC 5849 §3.5.1
        // percent-encodes it, but no provider issues one), and printed (a
        // summary shows its last characters) it could drive the terminal.
        if let odd = required.first(where: { name in
            pairs.contains { $0.0 == name && !$0.1.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) } }
        }) {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(odd),
                    "the reply's '\(odd)' holds a space, a control character or a character outside ASCII, which no token has; it is not repeated here"
                ))
        }
        return pairs
    }

    // MARK: - Error bodies

    /// Twitter's `{"errors":[{"code":32,"message":"Could not authenticate you."}]}`,
    /// or `{"error": …, "error_description": …}`.
    static func jsonError(in body: Data, status: Int) -> ProviderErrorResponse? {
        guard let value = try? JSONValue(parsing: body), case .object(let object) = value else { return nil }
        if case .array(let errors)? = object["errors"], case .object(let first)? = errors.first {
            let code = first["code"]?.scalarText ?? "error"
            return ProviderErrorResponse(
                status: status, code: clip(code), description: first["message"]?.scalarText.map { clip($0) })
        }
        if let code = object["error"]?.scalarText {
            return ProviderErrorResponse(
                status: status, code: clip(code),
                description: (object["error_description"] ?? object["message"])?.scalarText.map { clip($0) })
        }
        return nil
    }

    /// The text of an HTML page's `<title>`, if short and present.
    static func htmlTitle(in body: Data) -> String? {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        guard let open = text.firstMatch(of: #/<title/#.ignoresCase()),
            let close = text[open.range.upperBound...].firstIndex(of: ">"),
            let end = text[close...].firstMatch(of: #/</title>/#.ignoresCase())
        else { return nil }
        let title = clip(String(text[text.index(after: close)..<end.range.lowerBound]))
        return title.isEmpty ? nil : title
    }

    /// The provider's text as it may appear in a message: the secrets the
    /// request carried masked (`SecretMask`, shared with OAuth 2.0), then ``clip(_:limit:)``.
    func quote(_ text: String, limit: Int = 200) -> String {
        Self.clip(SecretMask(secrets).apply(text), limit: limit)
    }

    /// The field names of a reply, for a message that says which are there:
    /// names only (the values may be secrets), each quoted as the rest of
    /// the provider's text is (a server that echoes the request as a field
    /// name, `OAuth …, oauth_signature="…"`, would otherwise show a PLAINTEXT
    /// signature, the secrets themselves), and a bounded number of them (a
    /// reply of 20,000 fields made a 269 KB line).
    func present(_ names: some Collection<String>) -> String {
        guard !names.isEmpty else { return "none" }
        let shown = names.sorted().prefix(Self.namesShown).map { "'\(quote($0, limit: 40))'" }
        let more = names.count > Self.namesShown ? " and \(names.count - Self.namesShown) more" : ""
        return shown.joined(separator: ", ") + more
    }

    /// How many field names a message lists.
    static let namesShown = 10

    /// One line, printable, at most `limit` characters.
    static func clip(_ text: String, limit: Int = 200) -> String {
        let oneLine = text.unicodeScalars.map { $0.isControl ? " " : String($0) }.joined()
            .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return oneLine.count > limit ? String(oneLine.prefix(limit)) + "…" : oneLine
    }
}
