import AuthKit

/// The small HTML pages a person sees in the sandbox: consent, the device
/// code form, an OAuth 1.0a PIN, errors. Every value is escaped; no script.
enum ConsentPage {
    static func consent(
        provider: String, client: String, scopes: [String], request: String, approval: String, account: String
    ) -> String {
        let scopeList =
            scopes.isEmpty ? "<li>(no scopes)</li>" : scopes.map { "<li><code>\(escape($0))</code></li>" }.joined()
        return page(
            title: "Sign in to \(provider) (sandbox)",
            body: """
                <p><b>\(escape(client))</b> asks to access your \(escape(provider)) account with:</p>
                <ul>\(scopeList)</ul>
                <form method="post" action="/consent">
                <input type="hidden" name="request" value="\(escape(request))">
                <input type="hidden" name="approval" value="\(escape(approval))">
                <label>Account <input name="account" value="\(escape(account))"></label>
                <p><button name="decision" value="approve">Approve</button>
                <button name="decision" value="deny">Deny</button></p>
                </form>
                """)
    }

    static func deviceForm(provider: String, userCode: String?, approval: String, account: String) -> String {
        page(
            title: "Connect a device to \(provider) (sandbox)",
            body: """
                <form method="post" action="/device">
                <input type="hidden" name="approval" value="\(escape(approval))">
                <label>Code <input name="user_code" value="\(escape(userCode ?? ""))"></label>
                <label>Account <input name="account" value="\(escape(account))"></label>
                <p><button name="decision" value="approve">Approve</button>
                <button name="decision" value="deny">Deny</button></p>
                </form>
                """)
    }

    static func pin(provider: String, verifier: String) -> String {
        page(
            title: "\(provider) (sandbox)",
            body: "<p>Enter this PIN in the application: <code id=\"pin\">\(escape(verifier))</code></p>")
    }

    static func message(title: String, _ text: String, isError: Bool = false) -> String {
        page(title: title, body: "<p class=\"\(isError ? "error" : "message")\">\(escape(text))</p>")
    }

    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>\(escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:36em;margin:3em auto}.error{color:#b00}</style></head>
        <body><h1>\(escape(title))</h1>
        \(body)
        <p><small>AuthKit sandbox: an emulation on this machine, not the real provider.</small></p>
        </body></html>
        """
    }

    static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
