#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory AuthKit keeps its user files in: `providers/` overrides,
/// `config.json` client settings and `credentials.json`.
///
/// `$AUTHKIT_HOME` if set. Otherwise, on a desktop (Linux, macOS):
/// `$XDG_CONFIG_HOME/authkit`, else `~/.config/authkit` (the XDG Base
/// Directory default). On Apple's mobile platforms, where an app has no home
/// directory of its own to write in (`homeDirectoryForCurrentUser` is
/// macOS-only): `Library/Application Support/AuthKit` inside the app's
/// container, the place Apple gives for files an app creates and keeps.
package enum AuthKitHome {
    /// Which rule picks the default directory.
    package enum Platform: Sendable {
        /// Linux and macOS: the XDG configuration directory.
        case desktop
        /// iOS, iPadOS, tvOS, watchOS, visionOS: the app's Application Support directory.
        case mobile(applicationSupport: URL)

        /// The platform this code runs on.
        static var current: Platform {
            #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
                let support =
                    FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                    ?? FileManager.default.temporaryDirectory
                return .mobile(applicationSupport: support)
            #else
                return .desktop
            #endif
        }
    }

    package static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        directory(environment: environment, platform: .current)
    }

    /// A relative `$AUTHKIT_HOME` is taken from the working directory;
    /// ``problem(environment:)`` says why a command line should refuse it.
    /// A relative `$XDG_CONFIG_HOME` is ignored, as the XDG Base Directory
    /// specification says ("If an implementation encounters a relative path
    /// in any of these variables it should consider the path invalid").
    package static func directory(environment: [String: String], platform: Platform) -> URL {
        if let home = environment["AUTHKIT_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        switch platform {
        case .mobile(let applicationSupport):
            return applicationSupport.appendingPathComponent("AuthKit", isDirectory: true)
        case .desktop:
            if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
                return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent(
                    "authkit", isDirectory: true)
            }
            return desktopHome(environment: environment).appendingPathComponent(".config/authkit", isDirectory: true)
        }
    }

    /// Why `$AUTHKIT_HOME` cannot be used, or `nil`: a relative path names
    /// another directory — another store, other provider files — in every
    /// working directory, so a sign-in made in one would be missing in the
    /// next; a leading `~` is usually a shell's tilde left unexpanded in
    /// quotes or an env file.
    ///
    /// It also says when the directory (``directory(environment:)``, from
    /// `$AUTHKIT_HOME` or the default) is taken by a file, or a part of its
    /// path is: every command would otherwise report no credentials, and no
    /// sign-in could be stored.
    package static func problem(environment: [String: String]) -> String? {
        relativeProblem(environment: environment) ?? fileProblem(environment: environment)
    }

    /// Why AuthKit's directory must not be used because someone else could
    /// write in it, or `nil`: it belongs to another user (a home created
    /// in `/tmp` by someone else), or others can write it, even with the
    /// sticky bit (mode 1777): there they could create what AuthKit has not
    /// made yet, such as a link at `sandbox/` to the real store, or a
    /// `providers/` directory of their own. Refused, not warned about.
    package static func foreignWriteProblem(environment: [String: String]) -> String? {
        let path = directory(environment: environment).path
        let named =
            environment["AUTHKIT_HOME"].map { !$0.isEmpty } == true
            ? "AUTHKIT_HOME (\(path))" : "AuthKit's directory \(path)"
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            return
                "\(named) belongs to another user (uid \(info.st_uid)), who could place files and links in it that send your credentials elsewhere; it is not used. Set AUTHKIT_HOME to a directory of your own."
        }
        // FileSystem's rule, without its exception for a sticky directory.
        guard let who = FileSystem.otherWriters(info, path: path, allowingSticky: false) else { return nil }
        return
            "\(named) can be written by \(who) (\(FileSystem.modeText(info))), who could place files and links in it that send your credentials elsewhere; it is not used. Run: chmod 700 \(FileSystem.shellQuoted(path))"
    }

    private static func fileProblem(environment: [String: String]) -> String? {
        let path = directory(environment: environment).path
        let named =
            environment["AUTHKIT_HOME"].map { !$0.isEmpty } == true
            ? "AUTHKIT_HOME (\(path))" : "AuthKit's directory \(path)"
        var info = stat()
        guard stat(path, &info) == 0 else {
            // A link to nothing (a disk not mounted, a dotfiles directory
            // moved): every command said "No stored credentials", and a
            // sign-in could not be stored ("exists and is not a directory").
            if errno == ENOENT, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                return
                    "\(named) is a symbolic link to \(target), which does not exist (a disk not mounted, a directory moved?). Create that directory, or point the link or AUTHKIT_HOME at one."
            }
            // ENOTDIR: a part of the path before the last is a file. (ENOENT
            // is a home not made yet: the first save makes it.)
            guard errno == ENOTDIR else { return nil }
            return "\(named) cannot be a directory: a part of its path is a file. Set AUTHKIT_HOME to a directory."
        }
        guard info.st_mode & S_IFMT != S_IFDIR else { return nil }
        return "\(named) is a file, not a directory. Move the file aside, or set AUTHKIT_HOME to a directory."
    }

    private static func relativeProblem(environment: [String: String]) -> String? {
        guard let home = environment["AUTHKIT_HOME"], !home.isEmpty else {
            return relativeHOMEProblem(environment: environment)
        }
        if home.hasPrefix("/") {
            // An env file's or a paste's slip: "/srv/authkit " names another,
            // empty, directory, which every command then used without a word.
            if home.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return
                    "AUTHKIT_HOME holds a line break or other control character, which no directory meant for it does. Set it to the directory's path alone."
            }
            if home.last?.isWhitespace == true {
                return
                    "AUTHKIT_HOME ('\(home)') ends with a space, which names another directory than '\(home.trimmingSpacesAndNewlines())'. Remove the space (check the env file or unit that sets it)."
            }
            return nil
        }
        let shown =
            home.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? "a relative path" : "'\(home)', a relative path"
        let tilde =
            home.hasPrefix("~") ? " ('~' is expanded only by a shell, and not inside quotes: write $HOME instead)" : ""
        return
            "AUTHKIT_HOME is \(shown)\(tilde); it would name another directory in every working directory. Set it to an absolute path, such as $HOME/.config/authkit."
    }

    /// The default directory comes from `$HOME` (no `$AUTHKIT_HOME`, no
    /// absolute `$XDG_CONFIG_HOME`) and `$HOME` is relative: the same fault as
    /// a relative `$AUTHKIT_HOME`, from a service manager's or a script's
    /// environment.
    private static func relativeHOMEProblem(environment: [String: String]) -> String? {
        guard case .desktop = Platform.current, environment["XDG_CONFIG_HOME"]?.hasPrefix("/") != true,
            let home = environment["HOME"], !home.isEmpty, !home.hasPrefix("/")
        else { return nil }
        let shown =
            home.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? "a relative path" : "'\(home)', a relative path"
        return
            "HOME is \(shown), so AuthKit's directory ($HOME/.config/authkit) would be another in every working directory. Set HOME, or AUTHKIT_HOME, to an absolute path."
    }

    /// `$HOME`, else the account's home directory (asked of the system only
    /// on macOS and Linux, where the call exists).
    private static func desktopHome(environment: [String: String]) -> URL {
        if let home = environment["HOME"], !home.isEmpty { return URL(fileURLWithPath: home, isDirectory: true) }
        #if os(macOS) || os(Linux)
            return FileManager.default.homeDirectoryForCurrentUser
        #else
            return FileManager.default.temporaryDirectory
        #endif
    }
}
