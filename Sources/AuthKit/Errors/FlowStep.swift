/// The step of an authorization flow an error came from, so a message can say
/// "the token exchange failed" rather than just "failed".
public enum FlowStep: String, Sendable, Hashable, Codable {
    case authorization = "authorization"
    case tokenExchange = "token exchange"
    case followUpExchange = "follow-up token exchange"
    case refresh = "token refresh"
    case revocation = "token revocation"
    case requestToken = "request token"
    case accessToken = "access token"
    case apiRequest = "API request"
}
