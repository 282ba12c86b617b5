import ArgumentParser
import AuthKit

/// Which provider, and which of its accounts, a command works on.
struct AccountOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The provider id, as in 'authkit providers list'.", valueName: "id"))
    var provider: String

    @Option(name: .long, help: ArgumentHelp("The account label, when one provider holds several accounts.", valueName: "label"))
    var label: String?

    var key: CredentialKey { CredentialKey(providerID: provider, label: label) }
}
