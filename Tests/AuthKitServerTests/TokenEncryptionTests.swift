import AuthKit
import Crypto
import Foundation
import Testing

@testable import AuthKitPostgres

/// Keys as an app hands them over (no database needed).
@Suite struct TokenEncryptionTests {
    /// A key file read whole ends in a newline; a list may have spaces
    /// after its commas. Both were "not written as id:BASE64".
    @Test func keysReadFromAFileOrAListWithSpacesAreTaken() throws {
        let (one, two) = (TokenEncryption.newKeyText(id: "k1"), TokenEncryption.newKeyText(id: "k2"))
        let keys = try TokenEncryption(text: "\(one), \(two)\n")
        #expect(keys.currentKeyID == "k1")
        let (keyID, sealed) = try keys.seal(Data("token".utf8), binding: "row")
        #expect(try keys.open(sealed, keyID: keyID, binding: "row") == Data("token".utf8))
    }

    /// A row's key id is whatever the row's writer put there: a line break
    /// in it forged a second line in the app's log, and 10,000 characters
    /// were logged whole.
    @Test func aStoredKeyIDIsShownSanitizedAndShort() throws {
        let keys = try TokenEncryption(text: TokenEncryption.newKeyText(id: "k1"))
        let (_, sealed) = try keys.seal(Data("token".utf8), binding: "row")
        let forged = "x\n2026-12-03T10:00:00+0000 critical: FORGED" + String(repeating: "y", count: 10_000)
        do {
            _ = try keys.open(sealed, keyID: forged, binding: "row")
            Issue.record("opened under an unknown key id")
        } catch let error as AuthKitError {
            let text = "\(error)"
            #expect(!text.contains("\n") && text.count < 300, "\(text.prefix(300))")
        }
    }

    /// Two keys under one id: the second was dropped without a word, and
    /// every row it had sealed read as altered.
    @Test func twoKeysUnderOneIDAreRefused() {
        let text = TokenEncryption.newKeyText(id: "k1") + "," + TokenEncryption.newKeyText(id: "k1")
        #expect(throws: AuthKitError.encryption(.repeatedKeyID("k1"))) { try TokenEncryption(text: text) }
    }

    /// Id and key swapped (`BASE64:key1`): the error said the "key" key1 had
    /// the wrong size, naming the real key in full as its id, for a
    /// start-up log to keep. Now the id is checked first, and not repeated.
    @Test func aKeyGivenAsTheIDIsNotRepeated() throws {
        let keyText = String(TokenEncryption.newKeyText(id: "k1").dropFirst("k1:".count))
        do {
            _ = try TokenEncryption(text: keyText + ":key1") // "key1" reads as 3 bytes of base64
            Issue.record("a key was taken as an id")
        } catch let error as AuthKitError {
            guard case .encryption(.invalidKeyID) = error.reason else {
                Issue.record("\(error)")
                return
            }
            #expect(!"\(error)".contains(keyText) && "\(error)".contains("id first"), "\(error)")
        }
        // Unpadded base64url passes as an id: the size error does not name it.
        let unpadded = keyText.replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        #expect(throws: AuthKitError.self) { try TokenEncryption(text: unpadded + ":key1") }
        do {
            _ = try TokenEncryption(text: unpadded + ":key1")
        } catch {
            #expect(!"\(error)".contains(unpadded), "\(error)")
        }
    }
}
