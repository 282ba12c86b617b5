import Foundation
import Testing

@testable import AuthKit

/// There is no Apple SDK on the Linux machines CI runs on, so what can be
/// checked here is checked here: the core and AuthKitOAuth1 call nothing
/// Apple marks unavailable on iOS outside code compiled only for macOS or
/// Linux, and the home directory has a default an iOS app can write to.
@Suite struct ApplePlatformTests {
    /// Foundation and POSIX calls that exist on macOS (and Linux) but not on
    /// iOS, iPadOS, tvOS, watchOS or visionOS. A start, not an exhaustive list.
    static let desktopOnlyCalls = [
        "homeDirectoryForCurrentUser", "homeDirectory(forUser", "NSHomeDirectoryForUser", "NSUserName()",
        "NSFullUserName()", "Process()", "Foundation.Process", "NSTask", "NSWorkspace", "NSAppleScript",
        "Host.current", "NSRunningApplication", "NSPasteboard", "import AppKit", "fork()", "system(",
        "posix_spawn", "execv(", "execvp(",
    ]

    /// `#if` conditions under which code is compiled for macOS or Linux only.
    static let desktopConditions: Set<String> = [
        "os(macOS)", "os(Linux)", "canImport(Glibc)", "canImport(Musl)", "canImport(CAuthKitLinux)",
        "canImport(FoundationNetworking)",
    ]
    static let mobileConditions: Set<String> = ["os(iOS)", "os(tvOS)", "os(watchOS)", "os(visionOS)"]

    static func disjuncts(_ condition: some StringProtocol) -> [String] {
        condition.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The lines of `text` that every platform compiles, numbered from 1:
    /// lines inside `#if os(macOS) || os(Linux)` (or the `#else` of an iOS
    /// branch) are left out.
    static func linesEveryPlatformCompiles(_ text: String) -> [(Int, String)] {
        var stack: [(condition: String, desktopOnly: Bool)] = []
        var kept = [(Int, String)]()
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#if ") {
                let condition = String(trimmed.dropFirst(4))
                stack.append((condition, disjuncts(condition).allSatisfy(desktopConditions.contains)))
            } else if trimmed.hasPrefix("#elseif "), !stack.isEmpty {
                let condition = String(trimmed.dropFirst(8))
                stack[stack.count - 1] = (condition, disjuncts(condition).allSatisfy(desktopConditions.contains))
            } else if trimmed == "#else", let top = stack.last {
                stack[stack.count - 1] = (
                    "!(\(top.condition))", disjuncts(top.condition).allSatisfy(mobileConditions.contains)
                )
            } else if trimmed == "#endif" {
                _ = stack.popLast()
            } else if !stack.contains(where: \.desktopOnly), !trimmed.hasPrefix("//") {
                kept.append((index + 1, String(line)))
            }
        }
        return kept
    }

    /// The Swift files under `directory` (relative to the package root).
    static func swiftFiles(in directory: String) -> [URL] {
        FileManager.default.enumerator(
            at: PublicAPITests.root.appendingPathComponent(directory), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    }

    @Test(arguments: ["Sources/AuthKit", "Sources/AuthKitOAuth1", "Sources/AuthKitApple"])
    func noDesktopOnlyCallOutsideDesktopCode(directory: String) throws {
        let files = Self.swiftFiles(in: directory)
        #expect(files.count > 5)
        var found = [String]()
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in Self.linesEveryPlatformCompiles(text) {
                for call in Self.desktopOnlyCalls where line.contains(call) {
                    found.append("\(file.lastPathComponent):\(number): \(call)")
                }
            }
        }
        #expect(found.isEmpty, "unavailable on iOS: \(found)")
    }

    /// Standard-library calls newer than the platforms Package.swift declares
    /// (macOS 13, iOS 16): `String(validating:as:)` needs macOS 15 and iOS
    /// 18, so the core did not compile for the platforms it names. Where one
    /// is wanted, AuthKit has its own (`ValidUTF8`) or an `#available` check.
    static let newerThanThePlatforms = ["String(validating:"]

    @Test func noCallNewerThanTheDeclaredPlatforms() throws {
        let files = Self.swiftFiles(in: "Sources")
        #expect(files.count > 50)
        var found = [String]()
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for call in Self.newerThanThePlatforms where code.contains(call) {
                    found.append("\(file.lastPathComponent):\(number + 1): \(call)")
                }
            }
        }
        #expect(found.isEmpty, "needs a newer OS than Package.swift's platforms: \(found)")
        #expect(
            ValidUTF8.string([0x61, 0xC3, 0xA9]) == "aé" && ValidUTF8.string([0x61, 0xC3]) == nil
                && ValidUTF8.string([0xEF, 0xBF, 0xBD]) == "\u{FFFD}" && ValidUTF8.string([0xED, 0xA0, 0x80]) == nil)
    }

    /// SwiftPM builds every target of the package on any host, so the Linux
    /// C target must build on a Mac too: each of its files is empty outside
    /// Linux (it included <link.h> and <sys/prctl.h>). And the modules that
    /// spawn with swift-subprocess take its `FilePath` from the SDK's
    /// `System` where there is one: `SystemPackage`, which other packages
    /// build on a Mac as well, has a `FilePath` of its own.
    @Test func linuxOnlyCodeBuildsAsNothingElsewhere() throws {
        let directory = PublicAPITests.root.appendingPathComponent("Sources/CAuthKitLinux")
        let files =
            (FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []).filter { ["c", "h"].contains($0.pathExtension) }
        #expect(files.count >= 7)
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("//") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(code.first == "#if defined(__linux__)", "\(file.lastPathComponent) starts with \(code.first ?? "")")
            #expect(code.last?.hasPrefix("#endif") == true, "\(file.lastPathComponent)")
        }
        for file in Self.swiftFiles(in: "Sources") + Self.swiftFiles(in: "Tests") {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(
                !text.contains("#if canImport(" + "SystemPackage)"),
                "\(file.lastPathComponent): test canImport(System) first")
        }
    }

    /// The scanner itself: it must see a call outside a guard, and not one inside.
    @Test func theScannerSeesThroughGuards() {
        let text = """
            let a = FileManager.default.homeDirectoryForCurrentUser
            #if os(macOS) || os(Linux)
            let b = FileManager.default.homeDirectoryForCurrentUser
            #else
            let c = 1
            #endif
            #if os(iOS)
            let d = 2
            #else
            let e = Process()
            #endif
            """
        let kept = Self.linesEveryPlatformCompiles(text).map(\.0)
        #expect(kept == [1, 5, 8])
    }

    @Test func theHomeDirectoryOnMobileIsInApplicationSupport() {
        let support = URL(fileURLWithPath: "/var/mobile/Containers/Data/Application/X/Library/Application Support")
        let home = AuthKitHome.directory(
            environment: ["HOME": "/var/mobile"], platform: .mobile(applicationSupport: support))
        #expect(home.path == support.path + "/AuthKit")
        // $AUTHKIT_HOME still wins, on every platform.
        #expect(
            AuthKitHome.directory(
                environment: ["AUTHKIT_HOME": "/tmp/x"], platform: .mobile(applicationSupport: support)
            ).path == "/tmp/x")
        #expect(
            AuthKitHome.directory(environment: ["HOME": "/home/u"], platform: .desktop).path
                == "/home/u/.config/authkit")
        #expect(
            AuthKitHome.directory(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "/c"], platform: .desktop).path
                == "/c/authkit")
        // A relative $XDG_CONFIG_HOME is ignored (XDG Base Directory specification);
        // a relative $AUTHKIT_HOME is a problem the command line refuses.
        #expect(
            AuthKitHome.directory(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "c"], platform: .desktop).path
                == "/home/u/.config/authkit")
        #expect(
            AuthKitHome.problem(environment: ["AUTHKIT_HOME": "c"]) != nil
                && AuthKitHome.problem(environment: ["AUTHKIT_HOME": "/c"]) == nil
                && AuthKitHome.problem(environment: [:]) == nil)
    }
}
