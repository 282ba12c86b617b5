import ArgumentParser
import AuthKit

/// Which provider, and which of its accounts, a command works on.
struct AccountOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The provider id, as in 'authkit providers list'.", valueName: "id"))
    var provider: String

    @Option(name: .long, help: ArgumentHelp("The account label, when one provider holds several accounts.", valueName: "label"))
    var label: String?

    var key: CredentialKey { CredentialKey(providerID: provider, label: label) }

    func validate() throws {
        // An empty label (an unset shell variable) would name a second account
        // that prints as "qiita ()" and is easily mistaken for the default.
        if let label, label.allSatisfy(\.isWhitespace) {
            throw ValidationError("--label takes a name such as work; got an empty one. Leave --label out for the default account.")
        }
    }
}
