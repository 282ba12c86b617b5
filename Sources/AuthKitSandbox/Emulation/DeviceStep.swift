import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The device authorization grant (RFC 8628): the device authorization
/// endpoint (§3.1–3.2), the page where the user enters the code (§3.3), and
/// the polls at the token endpoint (§3.4–3.5).
extension Emulator {
    func deviceAuthorization(_ request: SandboxRequest) -> SandboxResponse {
        let device = descriptor.device!
        do {
            let parameters = try parameters(of: request, device.encoding)
            _ = try authenticateClient(
                request, parameters, as: device.clientAuthentication, secretRequired: device.requiresClientSecret)
            // Where the descriptor puts the scopes (Twitch: scopes); the provider would ignore `scope`.
            if device.scopeParameter != "scope", parameters["scope"] != nil {
                throw Refusal(
                    "invalid_scope",
                    "this provider reads the requested scopes from '\(device.scopeParameter)' (device.scopeParameter), not 'scope'"
                )
            }
            var scopes = parameters[device.scopeParameter].map { splitScopes($0) } ?? []
            if scopes.isEmpty { scopes = descriptor.scopes.default }
            // As at the authorization endpoint (RFC 8628 §3.1 takes RFC 6749's scope).
            if let problem = scopeProblem(parameters[device.scopeParameter], scopes) {
                throw Refusal("invalid_scope", problem)
            }
            let deviceCode = ledger.mint("device")
            let userCode = ledger.mintUserCode()
            let status: GrantLedger.DeviceCode.Status = .pending
            ledger.deviceCodes[deviceCode] = GrantLedger.DeviceCode(
                userCode: userCode, scopes: scopes, status: status, expiresAt: now.addingTimeInterval(600),
                interval: options.deviceInterval)
            let verification = address.base + "/device"
            let complete =
                URL(string: verification)?.appendingQuery([("user_code", userCode)])?.absoluteString ?? verification
            return .json(
                .object([
                    "device_code": .string(deviceCode), "user_code": .string(userCode),
                    "verification_uri": .string(verification), "verification_uri_complete": .string(complete),
                    "expires_in": .integer(600), "interval": .integer(Int64(options.deviceInterval.rounded(.up))),
                ]), step: "device", summary: "device code issued; user code \(userCode)")
        } catch let refusal as Refusal {
            return shaped(refusal, mapping: .standard, step: "device")
        } catch {
            return shaped(Refusal("server_error", "\(error)", status: 500), mapping: .standard, step: "device")
        }
    }

    /// One poll. With ``SandboxOptions/Consent/approve`` (or `deny`) the
    /// first poll is still answered `authorization_pending`, so a client's
    /// waiting is exercised, and the decision lands before the second.
    func pollDevice(_ parameters: Parameters, jkt: String? = nil) throws -> SandboxResponse {
        guard let code = parameters["device_code"] else { throw Refusal.invalidRequest("device_code is missing") }
        guard var record = ledger.deviceCodes[code] else { throw Refusal.invalidGrant("the device code is unknown") }
        defer { ledger.deviceCodes[code] = record }
        guard record.expiresAt > now else { throw Refusal("expired_token", "the device code has expired") }
        record.polls += 1
        if let last = record.lastPoll, now.timeIntervalSince(last) < record.interval {
            record.lastPoll = now
            record.interval += 5 // §3.5
            throw Refusal("slow_down", "polled sooner than the interval; wait \(Int(record.interval)) s between polls")
        }
        record.lastPoll = now
        if case .pending = record.status, record.polls > 1 {
            switch options.consent {
            case .approve: record.status = .approved(account: options.defaultAccount)
            case .deny: record.status = .denied
            case .ask: break
            }
        }
        switch record.status {
        case .pending:
            throw Refusal("authorization_pending", "the user has not yet entered the code")
        case .denied:
            throw Refusal("access_denied", "the user denied the request")
        case .used:
            throw Refusal.invalidGrant("the device code was already used")
        case .approved(let account):
            record.status = .used
            let grant = ledger.newGrant(account: account, scopes: record.scopes, at: now)
            return issue(
                grant: grant, scopes: record.scopes, step: "token",
                summary: "device code exchanged for account \(account)", jkt: jkt)
        }
    }

    /// §3.3: the page where the user enters the code, and its answer.
    func deviceVerification(_ request: SandboxRequest) -> SandboxResponse {
        guard descriptor.device != nil else {
            return errorPage("\(descriptor.name) has no device grant.", step: "device", status: 404)
        }
        if request.method == "GET" {
            let userCode = request.query.flatMap { Parameters($0)["user_code"] }
            let approval = SecureRandom.token()
            ledger.deviceForms = ledger.deviceForms.filter { $0.value > now }
            ledger.deviceForms[approval] = now.addingTimeInterval(600)
            return .html(
                ConsentPage.deviceForm(
                    provider: descriptor.name, userCode: userCode, approval: approval, account: options.defaultAccount),
                step: "device", summary: "device code page")
        }
        if let refusal = crossSiteRefusal(request, step: "device") { return refusal }
        guard case .success(let pairs) = request.bodyParameters(.form) else {
            return errorPage("The form is not form-encoded.", step: "device")
        }
        let form = Parameters(pairs)
        // A user code is short and, in deterministic mode, a counter: it is
        // answered only with a value from a page the sandbox showed, to a
        // browser that addressed the sandbox by its own name (see
        // misaddressedRefusal; a process on this machine can fetch one, as
        // it could drive any local page).
        guard let approval = form["approval"], let until = ledger.deviceForms.removeValue(forKey: approval), until > now
        else {
            return errorPage(
                "This answer did not come from the code page the sandbox showed. Open the page again and enter the code there.",
                step: "device", status: 403)
        }
        let typed = (form["user_code"] ?? "").uppercased().filter { $0 != "-" && $0 != " " }
        // The pending one among codes that share a user code: a deterministic
        // run's SAND-nnnn repeats after 10,000 values minted, and the first
        // match found could be a used or expired one.
        let match = ledger.deviceCodes.first { entry in
            guard case .pending = entry.value.status, entry.value.expiresAt > now else { return false }
            return entry.value.userCode.filter { $0 != "-" } == typed
        }
        guard let (code, _) = match else {
            return errorPage("That code is unknown, expired or already used.", step: "device")
        }
        let account = form["account"] ?? options.defaultAccount
        if let problem = Self.accountProblem(account) { return errorPage(problem, step: "device") }
        let approve = form["decision"] == "approve"
        ledger.deviceCodes[code]?.status = approve ? .approved(account: account) : .denied
        return .html(
            ConsentPage.message(
                title: "\(descriptor.name) sandbox", approve ? "Approved. Return to your device." : "Denied."),
            step: "device", summary: approve ? "device approved by \(account)" : "device denied by \(account)")
    }
}
