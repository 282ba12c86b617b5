// Test-only: a separate process writing to a FileCredentialStore, for
// CrossProcessStoreTests in Tests/AuthKitTests (many processes at once, and SIGKILL mid-write).
//
//   AuthKitStoreStress save <file> <provider-prefix> <count>
//       saves <count> credentials <prefix>-0 … <prefix>-(count-1), then exits.
//   AuthKitStoreStress loop <file> <size>
//       forever: saves credential `loop` as generation 1, 2, 3…, its token
//       `genN-` repeated <size> times, printing "saved N" after each save returns.
//   AuthKitStoreStress current <home> <provider>
//       prints the provider's access token through a CredentialSource,
//       refreshing it when expired; in the keyring (a SecretServiceCredentialStore
//       of that schema, its locks in <home>) when AUTHKIT_STRESS_KEYRING_SCHEMA is set.
//   AuthKitStoreStress keyring-item <provider> <label> <text> [<collection>]
//       stores <text>, whatever it is, as the command line's keyring item of
//       that account (on the session bus of this process's environment); in
//       the keyring <collection> (its name), the other copies left, if given.
//   AuthKitStoreStress keyring-check
//       the command line's keyring's check before a sign-in: prints "ready",
//       or the error and exits 1.
import AuthKit
import Foundation

let arguments = CommandLine.arguments
func usage() -> Never {
    FileHandle.standardError.write(
        Data("usage: AuthKitStoreStress save <file> <prefix> <count> | loop <file> <size>\n".utf8))
    exit(64)
}
guard arguments.count >= 4 || arguments.count == 2 && arguments[1] == "keyring-check" else { usage() }
let fileStore = { FileCredentialStore(file: URL(fileURLWithPath: arguments[2])) }

switch arguments[1] {
case "save":
    guard arguments.count == 5, let count = Int(arguments[4]) else { usage() }
    for index in 0..<count {
        try await fileStore().save(
            Credential(providerID: "\(arguments[3])-\(index)", accessToken: "token-\(arguments[3])-\(index)"))
    }
case "loop":
    guard let size = Int(arguments[3]) else { usage() }
    // One credential whose token is large enough that writing the file takes
    // a while, so a kill often lands mid-write. The token repeats its
    // generation number, so a torn file would show mixed generations.
    var generation: Int64 = 0
    while true {
        generation += 1
        let token = String(repeating: "gen\(generation)-", count: size)
        try await fileStore().save(
            Credential(providerID: "loop", accessToken: token, rawFields: ["generation": .integer(generation)]))
        // Unbuffered, so the test sees every report made before the kill.
        FileHandle.standardOutput.write(Data("saved \(generation)\n".utf8))
    }
case "current":
    var environment = ProcessInfo.processInfo.environment
    environment["AUTHKIT_HOME"] = arguments[2]
    let descriptor = try ProviderCatalog.standard(environment: environment).descriptor(id: arguments[3])
    let client = try OAuth2Client(
        descriptor: descriptor, settings: ClientSettings.standard(for: descriptor, environment: environment))
    var store: any CredentialStore = FileCredentialStore(environment: environment)
    #if os(Linux)
        if let schema = environment["AUTHKIT_STRESS_KEYRING_SCHEMA"] {
            store = SecretServiceCredentialStore(schema: schema, lockDirectory: URL(fileURLWithPath: arguments[2]))
        }
    #endif
    let source = CredentialSource(authenticator: client, store: store, key: CredentialKey(providerID: arguments[3]))
    do {
        print(try await source.current().accessToken)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
case "keyring-check":
    #if os(Linux)
        do {
            try await SecretServiceCredentialStore(callTimeout: .seconds(30)).checkWritable()
            print("ready")
        } catch {
            print("\(error)")
            exit(1)
        }
    #else
        usage()
    #endif
case "keyring-item":
    #if os(Linux)
        guard arguments.count == 5 || arguments.count == 6 else { usage() }
        try await SecretServiceCredentialStore().store(
            arguments[4], for: CredentialKey(providerID: arguments[2], label: arguments[3]),
            in: arguments.count == 6 ? "/org/freedesktop/secrets/collection/\(arguments[5])" : nil)
    #else
        usage()
    #endif
default:
    usage()
}
