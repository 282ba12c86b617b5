import ArgumentParser
import AuthKit
@_spi(Reproducible) import AuthKitOAuth1
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Sign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the OAuth 1.0a Authorization header for a request (RFC 5849), from keys you give.",
        usage: "authkit sign [<options>] <url>",
        discussion: """
            With a fixed --nonce and --timestamp the header is reproducible. Twitter's
            documented example, with its published test keys (paste it as it is; it
            prints oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D"):

              u='https://api.twitter.com/1.1/statuses/update.json'
              d='status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a'
              d="$d%20signed%20OAuth%20request%21"
              authkit sign -X POST "$u?include_entities=true" -d "$d" \\
                --consumer-key xvz1evFS4wEEPTGEFPHBog \\
                --consumer-secret kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw \\
                --token 370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb \\
                --token-secret LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE \\
                --nonce kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg \\
                --timestamp 1318622958

            Secrets on a command line are visible to other users: leave out
            --consumer-secret and --token-secret and set AUTHKIT_CONSUMER_SECRET
            and AUTHKIT_TOKEN_SECRET instead. For stored credentials use
            'authkit token header'.
            """)

    /// The method is signed (RFC 5849 §3.4.1.1), so it must be the one curl
    /// will send: `curl -d` POSTs unless told otherwise, and so does this.
    @Option(
        name: [.customShort("X"), .long],
        help: ArgumentHelp(
            "The request method. Default: GET, or POST with -d, as curl sends it.", valueName: "method"))
    var method: String?
    @Argument(help: "The request URL, with its query.") var url: String
    @Option(
        name: [.customShort("d"), .long],
        help: ArgumentHelp(
            "An application/x-www-form-urlencoded body; its parameters are signed. @FILE reads it from a file (@- from standard input) without its line breaks, as curl -d does. Repeatable: the parts are joined with &, as in curl.",
            valueName: "data"))
    var data: [String] = []
    // Keys, tokens and secrets are taken whatever they start with (one
    // random base64url value in 64 starts with '-': it was "Missing value");
    // a flag in their place is refused (``ClientOptions/checkNotAFlag(_:after:)``).
    @Option(name: .long, parsing: .unconditional, help: "The consumer key (client id).") var consumerKey: String
    @Option(name: .long, parsing: .unconditional, help: "The consumer secret (or $AUTHKIT_CONSUMER_SECRET).")
    var consumerSecret: String?
    @Option(name: .long, parsing: .unconditional, help: "The token (oauth_token), if any.") var token: String?
    @Option(name: .long, parsing: .unconditional, help: "The token secret, if any (or $AUTHKIT_TOKEN_SECRET).")
    var tokenSecret: String?
    @Option(name: .long, help: "The signature method.") var signatureMethod: OAuth1SignatureMethod = .hmacSHA1
    // Taken whatever they start with: `--timestamp -5` was "Missing value".
    @Option(name: .long, parsing: .unconditional, help: "A fixed nonce (default: 16 random bytes as 32 hex digits).")
    var nonce: String?
    @Option(name: .long, parsing: .unconditional, help: "A fixed timestamp in seconds (default: now).") var timestamp:
        String?

    func validate() throws {
        for (value, flag) in [
            (consumerKey, "--consumer-key"), (consumerSecret, "--consumer-secret"), (token, "--token"),
            (tokenSecret, "--token-secret"),
        ] {
            try ClientOptions.checkNotAFlag(value, after: flag)
        }
        // Signed into the header as it is: an empty key signs for no client, a
        // control character would garble the header (RFC 9110 §5.5).
        if consumerKey.isEmpty || consumerKey.unicodeScalars.contains(where: { $0.isTerminalControl }) {
            throw ValidationError(
                "--consumer-key is \(consumerKey.isEmpty ? "empty" : "holding a control character"); give the consumer key (client id) as the provider shows it."
            )
        }
        if let method, let problem = TypedMethod.problem(method) { throw ValidationError(problem) }
        // RFC 5849 §3.3: the nonce tells this request from a replay; an
        // empty one is none (the provider refuses it, or takes the next
        // request with it for a replay).
        if let nonce, nonce.isEmpty || nonce.unicodeScalars.contains(where: { $0.isTerminalControl }) {
            throw ValidationError(
                "--nonce is \(nonce.isEmpty ? "empty" : "holding a control character"); give a random string unique to this request, or leave it out for 32 random hex digits."
            )
        }
        // Digits only, no leading zero (RFC 5849 §3.3: a positive integer):
        // `+1318622958` passed `UInt64(_:)` and was signed as typed, `%2B…`,
        // and `01318622958` writes the same second as another text.
        if let timestamp,
            timestamp.isEmpty || timestamp.hasPrefix("0") || !timestamp.utf8.allSatisfy({ (48...57).contains($0) })
                || UInt64(timestamp) == nil
        {
            throw ValidationError("--timestamp takes whole seconds since 1970 in digits, e.g. 1318622958.")
        }
        do { _ = try TypedURL.url(url) } catch let error as CLIError { throw ValidationError(error.message) }
        if Self.secret(consumerSecret, variable: "AUTHKIT_CONSUMER_SECRET") == nil {
            throw ValidationError(
                "No consumer secret: set AUTHKIT_CONSUMER_SECRET (other users can see a command line, not the environment), or pass --consumer-secret."
            )
        }
        // The secrets key the signature: a pasted line break, a space or an
        // empty value signs with another key, and the provider answers only
        // 401. Checked as `authorize` checks a client secret, never repeated.
        // Without --token, AUTHKIT_TOKEN_SECRET is not used (run), so not checked.
        for (flag, variable, value) in [
            ("--consumer-secret", "AUTHKIT_CONSUMER_SECRET", consumerSecret),
            ("--token-secret", "AUTHKIT_TOKEN_SECRET", tokenSecret),
        ] where flag == "--consumer-secret" || token != nil || tokenSecret != nil {
            guard let given = Self.secret(value, variable: variable) else { continue }
            let source = value != nil ? flag : variable
            // `-d @-` reads standard input; a secret given so was signed
            // with as the two characters "@-".
            if value != nil,
                given == "-"
                    || given.hasPrefix("@")
                        && (given == "@-" || FileManager.default.fileExists(atPath: String(given.dropFirst())))
            {
                throw ValidationError(
                    "\(flag) takes the secret itself, not a file or standard input. To keep it off the command line, set \(variable) (for a file: \(variable)=\"$(cat FILE)\")."
                )
            }
            // A token secret may be empty (RFC 5849 §3.4.2 signs with it "even
            // when" it is), given so on purpose: `--token-secret ''`. An empty
            // variable is most often one exported unset, and signed with, for
            // a 401; a consumer secret is never empty.
            if given.isEmpty, flag == "--consumer-secret" || value == nil {
                throw ValidationError(
                    "\(source) is empty; give the secret as the provider shows it\(flag == "--token-secret" ? " (an empty token secret on purpose: --token-secret '')" : ", or leave it out")."
                )
            }
            if !given.isEmpty, let problem = PastedClientValue.problem(given) {
                throw ValidationError(
                    "\(source): the secret \(problem). Give it as the provider shows it; it is not repeated here.")
            }
        }
        if let token, token.isEmpty || PastedClientValue.problem(token) != nil {
            throw ValidationError(
                "--token \(token.isEmpty ? "is empty" : "holds a control character or a space at an end"); give the oauth_token as the provider issued it."
            )
        }
        // RFC 5849 §3.4.2: a token's requests are signed with its secret too.
        let hasTokenSecret = Self.secret(tokenSecret, variable: "AUTHKIT_TOKEN_SECRET") != nil
        if token != nil, !hasTokenSecret {
            throw ValidationError(
                "--token needs its secret: set AUTHKIT_TOKEN_SECRET, or pass --token-secret (RFC 5849 §3.4.2 signs with both)."
            )
        }
        if token == nil, tokenSecret != nil {
            throw ValidationError(
                "--token-secret is given without --token; give both, or neither to sign for the client alone.")
        }
    }

    /// What OAuth 1.0a signs of `url` and `body` (their form parameters,
    /// RFC 5849 §3.4.1.3) must be read alike by the server: checked with
    /// ``checkQueryIsUTF8(_:)`` and ``checkNoProtocolParameter(in:body:withToken:)``.
    static func checkSignable(_ url: String, body: Data?, withToken: Bool) throws {
        try checkQueryIsUTF8(url)
        try checkNoProtocolParameter(in: url, body: body, withToken: withToken)
    }

    /// RFC 5849 §3.6 signs the query's parameters as UTF-8 text; an escape
    /// of other bytes (`%FF`, a `%C3` alone) is read differently by
    /// servers: AuthKit's signer and Go's `url.ParseQuery` keep the byte,
    /// Python's `unquote` (oauthlib) reads U+FFFD. A signature over it holds
    /// at one and fails at another, so it is refused, naming the escape.
    /// `-d` refuses the same (``Request/formProblem(_:)``).
    static func checkQueryIsUTF8(_ url: String) throws {
        if let escape = PercentEncoding.escapeNotUTF8(in: query(of: url)) {
            throw CLIError(
                "\(TypedURL.shown(url)) has '\(DisplayText.sanitized(escape, limit: 12))' in its query, which is not UTF-8 once decoded. OAuth 1.0a signs the query as UTF-8 text (RFC 5849 §3.6), and servers read other bytes differently (the byte itself, or U+FFFD), so the signature would not hold at all of them: encode the text's UTF-8 bytes (é is %C3%A9)."
            )
        }
    }

    /// RFC 5849 §3.5: each protocol parameter goes in one place. One the
    /// header carries given also in the URL or the body was signed there
    /// too, and the request sent with it twice, which a server refuses.
    ///
    /// Names are read pair by pair, each as the signer reads it (`+` a
    /// space, escapes decoded): the whole text decoded at once failed for
    /// one value that is not UTF-8 anywhere in it, and then no name was
    /// checked (`?oauth_nonce=evil&z=%FF` signed `oauth_nonce` twice).
    static func checkNoProtocolParameter(in url: String, body: Data?, withToken: Bool) throws {
        let carried =
            [
                "oauth_consumer_key", "oauth_signature_method", "oauth_timestamp", "oauth_nonce", "oauth_version",
                "oauth_signature",
            ]
            + (withToken ? ["oauth_token"] : [])
        for (place, text) in [
            ("the URL's query", query(of: url)), ("-d", body.map { String(decoding: $0, as: UTF8.self) } ?? ""),
        ] {
            for pair in text.split(separator: "&") {
                let written = String(pair.prefix { $0 != "=" })
                // A name that does not decode is no carried name, which is ASCII.
                let name = PercentEncoding.decode(written, plusAsSpace: true) ?? written
                if carried.contains(name) {
                    throw CLIError(
                        "\(name) is in \(place) and in the Authorization header this prints; OAuth 1.0a sends each protocol parameter in one place (RFC 5849 §3.5), so a server would refuse the request. Leave it out of \(place)."
                    )
                }
            }
        }
    }

    /// The query of `url` as written, without `?` and fragment.
    private static func query(of url: String) -> String {
        url.split(separator: "?", maxSplits: 1).dropFirst().first.map {
            String($0.split(separator: "#").first ?? "")
        } ?? ""
    }

    /// A flag wins over the environment, which other users cannot read (a
    /// command line they can, in the process list).
    private static func secret(_ flag: String?, variable: String) -> String? {
        flag ?? ProcessInfo.processInfo.environment[variable]
    }

    func run() async throws {
        let live = NonceAndTimestamp.live
        let consumerSecret = Self.secret(consumerSecret, variable: "AUTHKIT_CONSUMER_SECRET") ?? ""
        // Without a token there is no token secret (RFC 5849 §3.4.2: the key's
        // second half is empty): an AUTHKIT_TOKEN_SECRET exported for earlier
        // token requests signed client-only ones with the wrong key.
        let tokenSecret = token == nil ? nil : Self.secret(tokenSecret, variable: "AUTHKIT_TOKEN_SECRET")
        var signer = OAuth1Signer(
            consumerKey: consumerKey, consumerSecret: consumerSecret,
            signatureMethod: signatureMethod)
        let fixedNonce = nonce
        let fixedTimestamp = timestamp
        signer.nonceAndTimestamp = NonceAndTimestamp(
            nonce: { fixedNonce ?? live.nonce() }, timestamp: { fixedTimestamp ?? live.timestamp() })
        let body = try Request.signedForm(data)
        try Self.checkSignable(url, body: body, withToken: token != nil)
        let header = try signer.authorizationHeader(
            method: method?.uppercased() ?? (body == nil ? "GET" : "POST"), url: URL(string: url)!,
            contentType: body == nil ? nil : "application/x-www-form-urlencoded",
            body: body, token: token, tokenSecret: tokenSecret)
        Console.out("Authorization: \(header)")
    }
}

/// `--signature-method HMAC-SHA1`: the closed set argument-parser lists in help and completions.
extension OAuth1SignatureMethod: ExpressibleByArgument {}
