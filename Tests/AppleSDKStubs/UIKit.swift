// Stub: the part of UIKit AuthKitApple's example uses.
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif

@MainActor open class UIResponder {
    public init() {}
}

@MainActor open class UIView: UIResponder {}

@MainActor open class UIWindow: UIView {}
